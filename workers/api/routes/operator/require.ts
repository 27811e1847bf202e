import type { Context } from "hono";
import { ApiError } from "../../../shared/errors.js";
import type { AppEnv } from "../../context.js";
import { isOperator } from "../../credentials/operator.js";
import { limitAnonymous } from "../../middleware/auth.js";

/** Refuses (401) a request without the operator secret, charged per client address as any such request is. */
export async function requireOperator(c: Context<AppEnv>): Promise<void> {
  if (!(await isOperator(c.get("config"), c.req.header("authorization") ?? null))) {
    await limitAnonymous(c);
    throw new ApiError("UNAUTHORIZED", "This endpoint requires the operator secret (Authorization: Bearer).");
  }
}
