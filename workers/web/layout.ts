import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

// One layout for every server-rendered page: a header with the product name and, when signed in, the
// navigation and a sign-out button. The dashboard pages to come render into `body` the same way.
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export type NavUser = { email: string; csrf: string };

const STYLE = `
body{font-family:system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{display:flex;gap:1.5rem;align-items:center;padding:.75rem 1.5rem;background:#1b1f24;color:#fff}
header a{color:#fff}header .brand{font-weight:600;text-decoration:none}
header nav{display:flex;gap:1rem;flex:1}header form{margin:0}
main{max-width:60rem;margin:2rem auto;padding:0 1.5rem}
table{border-collapse:collapse;width:100%;background:#fff}th,td{text-align:left;padding:.5rem;border-bottom:1px solid #dde}
label{display:block;margin:.75rem 0 .25rem}input,select{font:inherit;padding:.4rem;min-width:16rem}
button{font:inherit;padding:.4rem .9rem;cursor:pointer}
.error{color:#a40000;background:#fde8e8;padding:.5rem .75rem}.notice{background:#e8f4fd;padding:.75rem}
.secret{font-family:monospace;font-size:1rem;width:100%;box-sizing:border-box}
fieldset label{display:flex;gap:.5rem;align-items:center}input[type=radio]{min-width:0}
.card{background:#fff;padding:1.5rem;border:1px solid #dde;max-width:28rem}
`;

export function layout(opts: { title: string; user?: NavUser | null; body: Html }): Html {
  const nav = opts.user
    ? html`<nav aria-label="Main">
          <a href="/">Projects</a>
          <a href="/settings/connected-apps">Connected apps</a>
        </nav>
        <span>${opts.user.email}</span>
        <form method="post" action="/sign-out">
          <input type="hidden" name="csrf" value="${opts.user.csrf}" />
          <button type="submit">Sign out</button>
        </form>`
    : "";
  return html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${opts.title} · Game Telemetry Analytics</title>
    <style>${raw(STYLE)}</style>
  </head>
  <body>
    <header><a class="brand" href="/">Game Telemetry Analytics</a>${nav}</header>
    <main>${opts.body}</main>
  </body>
</html>`;
}

export function errorBody(title: string, message: string): Html {
  return html`<h1>${title}</h1>
    <p role="alert">${message}</p>`;
}

export function dateCell(d: Date | null): Html {
  return d
    ? html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 16).replace("T", " ")} UTC</time>`
    : html`Never`;
}
