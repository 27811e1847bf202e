import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as run from "./run.js";

export const queryApp = new OpenAPIHono<AppEnv>({ defaultHook });
run.register(queryApp);
