import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as create from "./create.js";
import * as download from "./download.js";
import * as get from "./get.js";
import * as list from "./list.js";

export const exportsApp = new OpenAPIHono<AppEnv>({ defaultHook });
create.register(exportsApp);
list.register(exportsApp);
get.register(exportsApp);
download.register(exportsApp);
