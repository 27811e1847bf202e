import { readdir, readFile } from "node:fs/promises";

// The processes of a local stack, read from /proc: what the soak weighs and what the dev drill expects
// gone after Ctrl-C.

export type Proc = {
  pid: number;
  ppid: number;
  comm: string;
  cmdline: string;
  rssKb: number;
  zombie: boolean;
};

export async function processes(): Promise<Proc[]> {
  const out: Proc[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    try {
      const status = await readFile(`/proc/${name}/status`, "utf8");
      const cmdline = (await readFile(`/proc/${name}/cmdline`, "utf8")).replaceAll("\0", " ");
      const field = (k: string) => new RegExp(`^${k}:\\s+(\\S+)`, "m").exec(status)?.[1] ?? "";
      out.push({
        pid: Number(name),
        ppid: Number(field("PPid")),
        comm: field("Name"),
        cmdline,
        rssKb: Number(field("VmRSS") || 0),
        zombie: field("State") === "Z",
      });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/** `root` and every process under it (wrangler runs in a process group of its own: groups do not tell). */
export async function descendants(root: number): Promise<Proc[]> {
  const all = await processes();
  const mine = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (mine.has(p.ppid) && !mine.has(p.pid)) {
        mine.add(p.pid);
        grew = true;
      }
    }
  }
  return all.filter((p) => mine.has(p.pid));
}
