import { scrypt } from "@noble/hashes/scrypt.js";
import { timingSafeEqual } from "../../shared/credentials/secrets.js";

// Passwords are hashed with scrypt from @noble/hashes (audited, pure JS), because it runs inside a
// Worker: workerd refuses PBKDF2 above 100,000 iterations and forbids compiling WebAssembly at run time,
// which rules out the WASM Argon2id builds. Parameters are OWASP's scrypt minimum at 32 MiB of memory
// (N=2^15, r=8, p=3: the same cost as N=2^17, p=1 in a quarter of the memory, so two concurrent
// sign-ins fit in one 128 MB isolate). `npm run bench:password` measures the CPU per hash; docs/accounts.md
// has the number. The parameters travel with each hash, so raising them later leaves old hashes valid.
export const SCRYPT = { N: 2 ** 15, r: 8, p: 3, dkLen: 32 } as const;
const SALT_BYTES = 16;
export const PASSWORD_MIN = 8;
/** Bounded so a huge body cannot make the key derivation's input hashing expensive. */
export const PASSWORD_MAX = 1024;

const encoder = new TextEncoder();

function b64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) {
    s += String.fromCharCode(b);
  }
  return btoa(s).replace(/=+$/, "");
}

function unb64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function derive(password: string, salt: Uint8Array, params: { N: number; r: number; p: number }): Uint8Array {
  return scrypt(encoder.encode(password.normalize("NFKC")), salt, { ...params, dkLen: SCRYPT.dkLen });
}

/** PHC string format: $scrypt$ln=15,r=8,p=3$<salt>$<hash> (unpadded base64). */
export function hashPassword(password: string): string {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = derive(password, salt, SCRYPT);
  return `$scrypt$ln=${Math.log2(SCRYPT.N)},r=${SCRYPT.r},p=${SCRYPT.p}$${b64(salt)}$${b64(hash)}`;
}

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** Compares in constant time once derived; a malformed stored hash never matches. */
export function verifyPassword(password: string, stored: string): boolean {
  const m = PHC.exec(stored);
  if (!m) {
    return false;
  }
  const expected = unb64(m[5] ?? "");
  const actual = derive(password, unb64(m[4] ?? ""), {
    N: 2 ** Number(m[1]),
    r: Number(m[2]),
    p: Number(m[3]),
  });
  return timingSafeEqual(actual, expected);
}

/**
 * The same work as a verification, for an email that has no account: the answer's timing must not
 * tell whether the account exists.
 */
export function burnVerification(password: string): void {
  derive(password, new Uint8Array(SALT_BYTES), SCRYPT);
}

/** Why a new password is refused, or null when it is acceptable. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) {
    return `must be at least ${PASSWORD_MIN} characters`;
  }
  if (password.length > PASSWORD_MAX) {
    return `must be at most ${PASSWORD_MAX} characters`;
  }
  return null;
}
