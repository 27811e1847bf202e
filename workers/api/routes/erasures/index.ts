import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as create from "./create.js";
import * as get from "./get.js";
import * as list from "./list.js";
import * as preview from "./preview.js";

export const erasuresApp = new OpenAPIHono<AppEnv>({ defaultHook });
create.register(erasuresApp);
preview.register(erasuresApp);
list.register(erasuresApp);
get.register(erasuresApp);
