import { createMiddleware } from "hono/factory";
import { membershipOf, type TenantMembership } from "../accounts/team.js";
import { projectForUser } from "../accounts/users.js";
import type { AppEnv } from "../context.js";
import { readForm } from "./form.js";
import { errorPage, FORM_EXPIRED, signedIn, type Visitor } from "./respond.js";
import { csrfValid } from "./session.js";

// Who may use a page, as route middleware in the order every settings page checks it: signed in
// (else 307 to sign-in), a member of the project in the path (else 404, so other studios' projects
// are not confirmed to exist), then for a POST a form of ours with a valid CSRF token (else 403).

type UserProject = NonNullable<Awaited<ReturnType<typeof projectForUser>>>;

export type PageEnv = AppEnv & {
  Variables: AppEnv["Variables"] & {
    visitor: Visitor;
    project: UserProject;
    membership: TenantMembership;
    form: Record<string, string>;
  };
};

export const visitor = createMiddleware<PageEnv>(async (c, next) => {
  const v = await signedIn(c);
  if (v instanceof Response) {
    return v;
  }
  c.set("visitor", v);
  await next();
});

/** The project named by the path's `:projectId`, when the visitor belongs to its studio. */
export const userProject = createMiddleware<PageEnv>(async (c, next) => {
  const project = await projectForUser(
    c.get("db"),
    c.get("visitor").user.userId,
    c.req.param("projectId") ?? "",
  );
  if (!project) {
    return errorPage(c, 404, "Not found", "No such project.");
  }
  c.set("project", project);
  await next();
});

/** The studio named by the path's `:tenantId`, when the visitor belongs to it (else 404, as for a stranger's). */
export const userTenant = createMiddleware<PageEnv>(async (c, next) => {
  const membership = await membershipOf(
    c.get("db"),
    c.get("visitor").user.userId,
    c.req.param("tenantId") ?? "",
  );
  if (!membership) {
    return errorPage(c, 404, "Not found", "No such studio.");
  }
  c.set("membership", membership);
  await next();
});

/** The posted form, when it is one of ours with the session's CSRF token; `failed` titles the 403. */
export function csrfForm(failed: string) {
  return createMiddleware<PageEnv>(async (c, next) => {
    const form = await readForm(c);
    if (!form || !(await csrfValid(c, form.csrf))) {
      return errorPage(c, 403, failed, FORM_EXPIRED);
    }
    c.set("form", form);
    await next();
  });
}
