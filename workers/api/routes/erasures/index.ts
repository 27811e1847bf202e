import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as create from "./create.js";
import * as get from "./get.js";

export const erasuresApp = new OpenAPIHono<AppEnv>({ defaultHook });
create.register(erasuresApp);
get.register(erasuresApp);
