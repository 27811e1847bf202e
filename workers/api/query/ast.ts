/**
 * ClickHouse's own parse tree, as `EXPLAIN AST` prints it: one row per node, indented one space per
 * level, `Type [text] [(alias a)] [(children n)]`. The printed child counts are checked against the
 * indentation, so a crafted identifier or literal that tries to print a line of its own (a newline in
 * a quoted name) breaks the count and the whole statement is refused instead of being misread.
 */
export type AstNode = {
  type: string;
  /** What follows the type: an identifier's name, a function's name, a literal's value. */
  text: string;
  children: AstNode[];
};

export class AstShapeError extends Error {}

const LINE = /^( *)([A-Za-z][A-Za-z0-9_]*(?:::[A-Za-z]+)?)((?: .*)?)$/;
const CHILDREN = / \(children (\d+)\)$/;
const ALIAS = / \(alias (.*)\)$/;

type Pending = { node: AstNode; depth: number; declared: number };

export function parseAstDump(lines: string[]): AstNode {
  const roots: AstNode[] = [];
  const stack: Pending[] = [];
  for (const line of lines) {
    const m = LINE.exec(line);
    if (!m) {
      throw new AstShapeError(`unreadable parse tree line: ${JSON.stringify(line.slice(0, 80))}`);
    }
    const depth = (m[1] as string).length;
    let rest = m[3] as string;
    let declared = 0;
    const children = CHILDREN.exec(rest);
    if (children) {
      declared = Number(children[1]);
      rest = rest.slice(0, children.index);
    }
    const alias = ALIAS.exec(rest);
    if (alias) {
      rest = rest.slice(0, alias.index);
    }
    const node: AstNode = { type: m[2] as string, text: rest.slice(1), children: [] };
    while (stack.length && (stack.at(-1) as Pending).depth >= depth) {
      close(stack.pop() as Pending);
    }
    const parent = stack.at(-1);
    if (parent) {
      if (depth !== parent.depth + 1) {
        throw new AstShapeError("parse tree indentation skips a level");
      }
      parent.node.children.push(node);
    } else {
      if (depth !== 0) {
        throw new AstShapeError("parse tree does not start at its root");
      }
      roots.push(node);
    }
    stack.push({ node, depth, declared });
  }
  while (stack.length) {
    close(stack.pop() as Pending);
  }
  if (roots.length !== 1) {
    throw new AstShapeError(`expected one statement, the parse tree has ${roots.length} roots`);
  }
  return roots[0] as AstNode;
}

function close(p: Pending): void {
  if (p.node.children.length !== p.declared) {
    throw new AstShapeError(
      `parse tree node ${p.node.type} declares ${p.declared} children but has ${p.node.children.length}`,
    );
  }
}
