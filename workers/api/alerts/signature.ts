import { toHex } from "../../shared/credentials/secrets.js";

export const SIGNATURE_HEADER = "X-Telemetry-Signature";
export const TIMESTAMP_HEADER = "X-Telemetry-Timestamp";
export const DELIVERY_HEADER = "X-Telemetry-Delivery";
export const SIGNING_SECRET_PREFIX = "whsec_";

/** `sha256=<hex>` of HMAC-SHA256 over exactly the bytes sent as the body. */
export async function signBody(secret: string, body: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return `sha256=${toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, body)))}`;
}
