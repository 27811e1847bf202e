import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

// One layout for every server-rendered page: a header with the product name and, when signed in, the
// navigation and a sign-out button. The dashboard pages (workers/api/web/dashboard.ts) render into `body`
// the same way, with `wide` and their script and stylesheet in `head`.
export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

export type NavUser = { email: string; csrf: string };

// Nothing is wider than the window (test/node/page-widths.test.ts measures every page at 1280 px): a long
// unbroken name (a build id, a map id, an email) wraps, in a table cell anywhere, so it never widens its
// table; numbers, times, buttons and the dashboard's short cells (client/table.ts) stay on one line. A
// table still too wide for its panel scrolls inside the panel (the last resort; never a panel with a map,
// whose tooltips would make it scroll).
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
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #2f6fde;outline-offset:2px}
main.wide{max-width:none;margin:1.25rem 0;padding:0 1.25rem}
.dashboard{display:flex;gap:1.25rem;align-items:flex-start}
.project-nav{flex:0 0 11rem;background:#fff;border:1px solid #dde;padding:.75rem}
.project-nav ul{list-style:none;margin:0;padding:0}.project-nav li a{display:block;padding:.35rem .5rem;color:#1b1f24;text-decoration:none;border-radius:3px}
.project-nav li a:hover{background:#eef1f5}.project-nav a[aria-current=page]{background:#1b1f24;color:#fff}
.project-name{font-weight:600;margin:0 0 .5rem}.project-name small{display:block;font-weight:400;color:#5a6270}
.content{flex:1;min-width:0}
.controls{display:flex;flex-wrap:wrap;gap:.75rem 1rem;align-items:flex-end;background:#fff;border:1px solid #dde;padding:.75rem;margin-bottom:1rem}
.controls label{margin:0;font-size:.85rem;color:#3a4150}.controls input,.controls select{display:block;min-width:8rem;margin-top:.2rem}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));gap:.75rem;margin:0 0 1rem;padding:0}
.kpi{background:#fff;border:1px solid #dde;padding:.75rem;margin:0}.kpi dt{font-size:.8rem;color:#5a6270}.kpi dd{margin:.2rem 0 0;font-size:1.5rem;font-weight:600}
.panel{background:#fff;border:1px solid #dde;padding:.75rem;margin-bottom:1rem}.panel h2{font-size:1.05rem;margin:.1rem 0 .6rem}
.state{padding:.75rem;background:#fff;border:1px dashed #c5cad3;color:#3a4150}.state.error{border:1px solid #e0a0a0;color:#a40000;background:#fde8e8}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.regression{color:#a40000;font-weight:600}.improvement{color:#1f7a3a}
.legend{display:flex;gap:1rem;flex-wrap:wrap;align-items:center;font-size:.85rem;margin:.5rem 0}
.swatch{display:inline-block;width:.9rem;height:.9rem;vertical-align:middle;margin-right:.3rem;border:1px solid #0003}
.map-wrap{position:relative;display:block;width:100%;max-width:calc(100vh * var(--aspect,1))}.map-wrap canvas{display:block;width:100%;height:auto}
.build-switch{display:flex;gap:.4rem;margin-bottom:.5rem}
.cell-focus{position:absolute;pointer-events:none;outline:3px solid #2f6fde;box-shadow:0 0 0 1px #fff}
.tooltip{position:absolute;pointer-events:none;background:#1b1f24;color:#fff;padding:.4rem .6rem;font-size:.8rem;border-radius:3px;white-space:nowrap;z-index:2}
.muted{color:#5a6270}.project-list{list-style:none;padding:0}.project-list h3{margin:.2rem 0}
.edit-form fieldset{border:1px solid #dde;margin:.75rem 0;padding:.5rem .75rem}.edit-form legend{font-size:.9rem;color:#3a4150}
.field-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:.25rem 1rem}.field-grid label{font-size:.9rem}
.field-grid input,.field-grid select,.field-grid textarea{display:block;box-sizing:border-box;width:100%;min-width:0;margin-top:.2rem;font:inherit;padding:.4rem}
.field-grid small{display:block}.checks{display:flex;flex-wrap:wrap;gap:.25rem 1.25rem}.checks label{display:flex;gap:.4rem;align-items:center;margin:.25rem 0}
.checks input{min-width:0}.actions{display:flex;gap:.4rem;flex-wrap:wrap}[aria-invalid=true]{outline:2px solid #a40000}
.form-status:empty{display:none}.form-status{color:#1f7a3a}
main{overflow-wrap:break-word}header span{min-width:0;overflow-wrap:anywhere}.project-name{overflow-wrap:anywhere}
td{overflow-wrap:anywhere}td:not(.num):not(.short){min-width:6rem}td.num,td.short,td time,td button{white-space:nowrap;overflow-wrap:normal}
.panel:not(:has(.map-wrap)){overflow-x:auto}
td input,td select{min-width:0;max-width:100%}pre{overflow-x:auto;max-width:100%}
.controls select{max-width:24rem}.build-switch{flex-wrap:wrap}.build-switch button{min-width:0;max-width:100%}
.chart{max-width:100%;overflow:hidden}
[hidden]{display:none!important}.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
`;

export function layout(opts: {
  title: string;
  user?: NavUser | null;
  body: Html;
  /** Dashboard pages use the full width (tables, charts and maps at 1280 px). */
  wide?: boolean;
  /** Extra head elements: a dashboard page's script and stylesheet. */
  head?: Html;
  /** The settings of the project in view, when there is one. */
  settingsHref?: string;
}): Html {
  const nav = opts.user
    ? html`<nav aria-label="Main">
          <a href="/">Projects</a>
          ${opts.settingsHref ? html`<a href="${opts.settingsHref}">Settings</a>` : ""}
          <a href="/settings/connected-apps">Connected apps</a>
          <a href="/settings/account">Account</a>
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
    <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
    <style>${raw(STYLE)}</style>
    ${opts.head ?? ""}
  </head>
  <body>
    <header><a class="brand" href="/">Game Telemetry Analytics</a>${nav}</header>
    <main${opts.wide ? raw(' class="wide"') : ""}>${opts.body}</main>
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
