import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as remove from "./delete.js";
import * as image from "./image.js";
import * as list from "./list.js";
import * as upload from "./upload.js";

/** Upload names its project by header, the rest by path. */
export const mapsApp = new OpenAPIHono<AppEnv>({ defaultHook });
list.register(mapsApp);
upload.register(mapsApp);
image.register(mapsApp);
remove.register(mapsApp);
