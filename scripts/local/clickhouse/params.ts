// Decoding of param_* URL values into the form chdb's queryBindAsync expects.

const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;
const COMPOSITE_TYPE = /\b(Array|Map|Tuple|Nested)\s*\(/i;
const SIMPLE_ESCAPES: Record<string, string> = {
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  "0": "\0",
  a: "\x07",
  v: "\v",
  e: "\x1b",
};

// The HTTP interface carries param_* values in ClickHouse's escaped text form,
// but chdb's queryBindAsync escapes string arguments itself. To make the engine
// see the same value the real server would, each value is decoded first:
// scalars completely, composite literals (Array/Map/Tuple) only inside their
// quoted strings, where a quote is re-spelled '' because chdb's escaping would
// turn \' into \\' and end the string early.
export function toChdbParams(params: Record<string, string>, sqlHead: string): Record<string, string | null> {
  const composite = new Set<string>();
  for (const match of sqlHead.matchAll(PLACEHOLDER)) {
    if (COMPOSITE_TYPE.test(match[2] as string)) {
      composite.add(match[1] as string);
    }
  }
  const bound: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(params)) {
    if (composite.has(name)) {
      bound[name] = respellCompositeLiteral(value);
    } else {
      bound[name] = value === "\\N" ? null : unescapeText(value);
    }
  }
  return bound;
}

function unescapeText(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; ) {
    const [char, next] = readChar(value, i);
    out += char;
    i = next;
  }
  return out;
}

function respellCompositeLiteral(value: string): string {
  let out = "";
  let quoted = false;
  for (let i = 0; i < value.length; ) {
    const raw = value[i] as string;
    if (quoted && raw === "'" && value[i + 1] === "'") {
      out += "''";
      i += 2;
    } else if (raw === "'") {
      quoted = !quoted;
      out += raw;
      i += 1;
    } else if (quoted) {
      const [char, next] = readChar(value, i);
      out += char === "'" ? "''" : char;
      i = next;
    } else {
      out += raw;
      i += 1;
    }
  }
  return out;
}

/** Reads one possibly backslash-escaped character; returns it and the next index. */
function readChar(value: string, i: number): [string, number] {
  const char = value[i] as string;
  const escaped = value[i + 1];
  if (char !== "\\" || escaped === undefined) {
    return [char, i + 1];
  }
  const hex = value.slice(i + 2, i + 4);
  if (escaped === "x" && /^[0-7][0-9a-fA-F]$/.test(hex)) {
    return [String.fromCharCode(Number.parseInt(hex, 16)), i + 4];
  }
  return [SIMPLE_ESCAPES[escaped] ?? escaped, i + 2];
}
