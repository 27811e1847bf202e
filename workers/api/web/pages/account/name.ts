import type { Hono } from "hono";
import { setName } from "../../../accounts/account.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, visitor } from "../../access.js";
import { attempt } from "./get.js";

export function register(app: Hono<AppEnv>) {
  app.post("/settings/account/name", visitor, csrfForm("Name not saved"), (c) =>
    attempt(c, async () => {
      await setName(c.get("db"), c.get("visitor").user.userId, c.get("form").name ?? "");
      return c.redirect("/settings/account?done=name", 303);
    }),
  );
}
