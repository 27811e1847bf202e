import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as list from "./list.js";
import * as status from "./status.js";

export const projectsApp = new OpenAPIHono<AppEnv>({ defaultHook });
list.register(projectsApp);
status.register(projectsApp);
