import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ProjectRow } from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";
import { projectFor } from "./auth.js";

const FIELD = "param.id";
const uuid = z.uuid();

/**
 * The project named by the path's {id}, authorized by projectFor, into c.var.project. It runs after
 * requireScope and before the route's validators, as projectFromHeader does: a caller who may not
 * reach the project gets the same 404 whatever its query or body. A malformed id is refused here
 * with the 400 the path validator gives it, so that it never reaches the database as a UUID.
 */
export const projectFromPath = createMiddleware<AppEnv & { Variables: { project: ProjectRow } }>(
  async (c, next) => {
    const parsed = uuid.safeParse(c.req.param("id"));
    if (!parsed.success) {
      throw new ApiError("BAD_REQUEST", `${FIELD}: ${parsed.error.issues[0]?.message ?? "invalid"}`, {
        extensions: { field: FIELD },
      });
    }
    // The same context, seen as it is before `project` is set.
    c.set("project", await projectFor(c as unknown as Context<AppEnv>, parsed.data));
    return next();
  },
);
