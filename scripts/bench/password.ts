// `npm run bench:password`: CPU per password hash and per sign-in check with the parameters the Worker
// uses (workers/api/accounts/password.ts). V8 runs the same pure-JS scrypt in Node and in workerd, so this
// is the CPU a sign-in costs a Worker. Median of BENCH_RUNS (7) after one warm-up; JSON on the last line.
import {
  burnVerification,
  hashPassword,
  SCRYPT,
  verifyPassword,
} from "../../workers/api/accounts/password.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

function cpuMs(fn: () => void): number {
  const start = process.cpuUsage();
  fn();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

const stored = hashPassword("correct horse battery staple");
const cases: Record<string, () => void> = {
  hash: () => hashPassword("correct horse battery staple"),
  "verify (known email)": () => verifyPassword("wrong password guess", stored),
  "unknown email (same work)": () => burnVerification("wrong password guess"),
};

const results: Record<string, number> = {};
console.log(
  `scrypt N=2^${Math.log2(SCRYPT.N)} r=${SCRYPT.r} p=${SCRYPT.p}, ${(128 * SCRYPT.r * SCRYPT.N) / 2 ** 20} MiB`,
);
console.log("| case | median CPU ms | min | max |");
console.log("| --- | --- | --- | --- |");
for (const [name, fn] of Object.entries(cases)) {
  fn();
  const times = Array.from({ length: RUNS }, () => cpuMs(fn));
  results[name] = Math.round(median(times));
  console.log(
    `| ${name} | ${median(times).toFixed(0)} | ${Math.min(...times).toFixed(0)} | ${Math.max(...times).toFixed(0)} |`,
  );
}
console.log(JSON.stringify({ scrypt: { ...SCRYPT }, medianCpuMs: results }));
