import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ProjectRow } from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";
import { projectFor } from "./auth.js";

const FIELD = "header.X-Project-Id";
const uuid = z.uuid();

/**
 * Documents the header; `projectFromHeader` enforces it. Hono hands validators header names in lower
 * case, and the document generator insists the parameter is named as the key; HTTP does not mind.
 */
export const ProjectHeader = z.object({
  "x-project-id": z.uuid().openapi({ description: "X-Project-Id: the project UUID" }),
});

/**
 * The project named by X-Project-Id, authorized as a path id is (projectFor). It runs before the body
 * validators so that a caller who may not reach the project learns nothing from how its body fares,
 * and an upload to someone else's project is refused before it is read.
 */
export const projectFromHeader = createMiddleware<AppEnv & { Variables: { project: ProjectRow } }>(
  async (c, next) => {
    const value = c.req.header("X-Project-Id");
    if (!value || !uuid.safeParse(value).success) {
      throw new ApiError("BAD_REQUEST", `${FIELD}: required, a project UUID`, {
        extensions: { field: FIELD },
      });
    }
    // The same context, seen as it is before `project` is set.
    c.set("project", await projectFor(c as unknown as Context<AppEnv>, value));
    return next();
  },
);
