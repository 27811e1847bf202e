import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import Provider, { type Adapter, type AdapterPayload, type KoaContextWithOIDC } from "oidc-provider";
import {
  type IdpAccount,
  type IdpAuthorizeResult,
  type IdpClient,
  type IdpControl,
  type IdpRogue,
  idpControl,
} from "./oidc-idp-control.js";

export type { IdpAccount, IdpAuthorizeResult, IdpClient, IdpControl, IdpRogue } from "./oidc-idp-control.js";

export type OidcIdp = IdpControl & {
  /** The provider's public signing key set (what `/jwks` serves). */
  jwks: { keys: JWK[] };
  close(): Promise<void>;
};

export type OidcIdpOptions = {
  /**
   * Loopback address to listen on (default 127.0.0.1). A browser test that serves the app on 127.0.0.1
   * can put the provider on 127.0.0.2: another site for the browser's cookies, as a real IdP is.
   */
  host?: string;
  clients?: IdpClient[];
  accounts?: IdpAccount[];
};

type StoredAccount = {
  sub: string;
  email: string;
  emailVerified: boolean | null;
  name: string;
  disabled: boolean;
  disabledAnswer: "page" | "access_denied";
  emailVerifiedOnlyAtUserinfo: boolean;
  xmsEdov: boolean | null;
};

const LOGIN_PROMPT_EMAIL = "email";

/**
 * A real OpenID provider for tests: `oidc-provider` (panva's certified implementation) on a loopback
 * port, plain http. Authorization code flow only, PKCE (S256) required of every client, ID tokens
 * signed RS256 with a key generated here, `email` and `email_verified` in the ID token (as Google,
 * Entra ID and Okta put them there), consent implied for registered clients. People sign in on a small
 * login form (`/interaction/<uid>`: email only; a disabled account is refused with 403). Clients,
 * accounts, the disabled switch and rogue ID tokens are set through the control plane
 * (`POST /__harness/…`, see oidc-idp-control.ts), so tests inside workerd drive it too.
 */
export async function startOidcIdp(options: OidcIdpOptions = {}): Promise<OidcIdp> {
  const host = options.host ?? "127.0.0.1";
  const accounts = new Map<string, StoredAccount>();
  const bySub = new Map<string, StoredAccount>();
  const rogues = new Map<string, IdpRogue>();
  const store = new Map<string, { payload: AdapterPayload; expiresAt: number }>();

  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = randomBytes(8).toString("hex");
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: "RS256", use: "sig" };
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = privateJwk;

  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(503).end();
  };
  const server = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = `http://${host}:${port}`;

  const provider = new Provider(issuer, {
    adapter: (model: string) => memoryAdapter(store, model),
    jwks: { keys: [privateJwk] },
    findAccount: (_ctx, sub) => {
      const account = bySub.get(sub);
      if (!account || account.disabled) {
        return undefined;
      }
      return {
        accountId: sub,
        claims: (use) => ({
          sub,
          email: account.email,
          ...(account.emailVerified === null || (use === "id_token" && account.emailVerifiedOnlyAtUserinfo)
            ? {}
            : { email_verified: account.emailVerified }),
          ...(account.xmsEdov === null ? {} : { xms_edov: account.xmsEdov }),
          name: account.name,
        }),
      };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified", "xms_edov"], profile: ["name"] },
    // Google, Entra ID and Okta all put the email claims in the ID token of the code flow.
    conformIdTokenClaims: false,
    responseTypes: ["code"],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // A registered client is the studio's own app: consent is implied (as an admin-approved app's is).
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const client = ctx.oidc.client;
      const session = ctx.oidc.session;
      if (!client || !session?.accountId) {
        return undefined;
      }
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) {
        const existing = await ctx.oidc.provider.Grant.find(grantId);
        if (existing) {
          return existing;
        }
      }
      const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    cookies: { keys: [randomBytes(32).toString("hex")] },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Session: 86400,
      Grant: 86400,
    },
  });

  // Rogue mode: rewrite the ID token of the client's next token response, re-signed.
  provider.use(async (ctx, next) => {
    await next();
    const clientId = ctx.oidc?.client?.clientId;
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (
      ctx.oidc?.route !== "token" ||
      ctx.status !== 200 ||
      !clientId ||
      typeof body?.id_token !== "string"
    ) {
      return;
    }
    const rogue = rogues.get(clientId);
    if (!rogue) {
      return;
    }
    rogues.delete(clientId);
    body.id_token = await rogueIdToken(body.id_token, rogue, privateKey);
  });
  provider.on("server_error", (_ctx, err) => console.error("[test IdP] server_error", err));

  const addAccount = (account: IdpAccount): string => {
    const email = account.email.trim().toLowerCase();
    const sub = account.sub ?? accounts.get(email)?.sub ?? `sub-${randomBytes(6).toString("hex")}`;
    const stored: StoredAccount = {
      sub,
      email,
      emailVerified: account.emailVerified === undefined ? true : account.emailVerified,
      name: account.name ?? email.split("@")[0] ?? email,
      disabled: account.disabled ?? false,
      disabledAnswer: account.disabledAnswer ?? "page",
      emailVerifiedOnlyAtUserinfo: account.emailVerifiedOnlyAtUserinfo ?? false,
      xmsEdov: account.xmsEdov ?? null,
    };
    const previous = accounts.get(email);
    if (previous) {
      bySub.delete(previous.sub);
    }
    accounts.set(email, stored);
    bySub.set(sub, stored);
    return sub;
  };
  // Disabling signs the person out at the provider too (their provider sessions end), as Google, Entra
  // ID and Okta do: the next authorization asks them to sign in, and the login form refuses them.
  const setDisabled = (account: StoredAccount, disabled: boolean) => {
    account.disabled = disabled;
    if (disabled) {
      for (const [key, entry] of store) {
        if (key.startsWith("Session:") && entry.payload.accountId === account.sub) {
          store.delete(key);
        }
      }
    }
  };
  const addClient = (client: IdpClient) => {
    const metadata: AdapterPayload = {
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: client.redirectUris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? "client_secret_basic",
    };
    store.set(`Client:${client.clientId}`, { payload: metadata, expiresAt: Number.POSITIVE_INFINITY });
  };
  for (const client of options.clients ?? []) {
    addClient(client);
  }
  for (const account of options.accounts ?? []) {
    addAccount(account);
  }

  const authorize = (url: string, email: string) => driveAuthorization(issuer, url, email);

  const providerCallback = provider.callback();
  handle = (req, res) => {
    const path = new URL(req.url ?? "/", issuer).pathname;
    if (path.startsWith("/__harness/")) {
      void control(req, res, path.slice("/__harness/".length));
      return;
    }
    const interaction = /^\/interaction\/([\w-]+)(\/login)?$/.exec(path);
    if (interaction) {
      void loginInteraction(req, res, interaction[2] !== undefined);
      return;
    }
    providerCallback(req, res);
  };

  const loginInteraction = async (req: IncomingMessage, res: ServerResponse, submitted: boolean) => {
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name !== "login") {
        page(
          res,
          400,
          "Unexpected step",
          `<p>This provider has no ${escapeHtml(details.prompt.name)} step.</p>`,
        );
        return;
      }
      if (!submitted || req.method !== "POST") {
        page(res, 200, "Sign in", loginForm(details.uid, ""));
        return;
      }
      const form = new URLSearchParams(await readBody(req));
      const email = (form.get(LOGIN_PROMPT_EMAIL) ?? "").trim().toLowerCase();
      const account = accounts.get(email);
      if (!account) {
        page(res, 401, "Sign in", loginForm(details.uid, "No account with that email."));
        return;
      }
      if (account.disabled && account.disabledAnswer === "access_denied") {
        await provider.interactionFinished(
          req,
          res,
          { error: "access_denied", error_description: "The account is disabled." },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      if (account.disabled) {
        page(res, 403, "Account disabled", "<p>This account is disabled. Contact your administrator.</p>");
        return;
      }
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false },
      );
    } catch (err) {
      page(
        res,
        400,
        "Sign-in error",
        `<p>${escapeHtml(err instanceof Error ? err.message : String(err))}</p>`,
      );
    }
  };

  const control = async (req: IncomingMessage, res: ServerResponse, action: string) => {
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    try {
      if (req.method !== "POST") {
        reply(405, { error: "POST only" });
        return;
      }
      const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
      switch (action) {
        case "clients":
          addClient(body as IdpClient);
          reply(200, { ok: true });
          return;
        case "accounts":
          reply(200, { sub: addAccount(body as IdpAccount) });
          return;
        case "disabled": {
          const account = accounts.get(String(body.email).toLowerCase());
          if (!account) {
            reply(404, { error: `no account ${String(body.email)}` });
            return;
          }
          setDisabled(account, body.disabled === true);
          reply(200, { ok: true });
          return;
        }
        case "rogue": {
          const rogue = body as IdpRogue;
          rogues.set(rogue.clientId, rogue);
          reply(200, { ok: true });
          return;
        }
        case "authorize":
          reply(200, await authorize(String(body.url), String(body.email)));
          return;
        default:
          reply(404, { error: `unknown control ${action}` });
      }
    } catch (err) {
      reply(400, { error: err instanceof Error ? err.message : String(err) });
    }
  };

  const control_ = idpControl(issuer);
  return {
    ...control_,
    addClient: async (client) => addClient(client),
    addAccount: async (account) => addAccount(account),
    setDisabled: async (email, disabled) => {
      const account = accounts.get(email.toLowerCase());
      if (!account) {
        throw new Error(`test IdP: no account ${email}`);
      }
      setDisabled(account, disabled);
    },
    rogue: async (rogue) => {
      rogues.set(rogue.clientId, rogue);
    },
    authorize,
    jwks: { keys: [publicJwk] },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The ID token with the rogue's changes, signed with the provider's key (or a foreign one) under its kid. */
async function rogueIdToken(idToken: string, rogue: IdpRogue, key: CryptoKey): Promise<string> {
  const header = decodeProtectedHeader(idToken);
  const claims: Record<string, unknown> = { ...decodeJwt(idToken), ...(rogue.set ?? {}) };
  for (const name of rogue.unset ?? []) {
    delete claims[name];
  }
  if (rogue.expiresInSeconds !== undefined) {
    const exp = Math.floor(Date.now() / 1000) + rogue.expiresInSeconds;
    claims.exp = exp;
    claims.iat = exp - 3600;
  }
  const signingKey = rogue.foreignKey ? (await generateKeyPair("RS256")).privateKey : key;
  return new SignJWT(claims).setProtectedHeader({ ...header, alg: header.alg ?? "RS256" }).sign(signingKey);
}

/**
 * Follows an authorization URL through the provider as a browser would (its own cookie jar, so a fresh
 * provider session), filling the login form with `email`, until the provider redirects off itself.
 */
async function driveAuthorization(issuer: string, url: string, email: string): Promise<IdpAuthorizeResult> {
  const jar = new Map<string, string>();
  let next = url;
  let init: RequestInit = { method: "GET" };
  for (let hop = 0; hop < 12; hop++) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const res = await fetch(next, {
      ...init,
      redirect: "manual",
      headers: { ...(init.headers as Record<string, string> | undefined), ...(cookie ? { cookie } : {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /expires=Thu, 01 Jan 1970/i.test(line)) {
        jar.delete(name);
      } else {
        jar.set(name, value);
      }
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel();
      const target = new URL(location, next);
      if (target.origin !== new URL(issuer).origin) {
        return { callback: target.href };
      }
      next = target.href;
      init = { method: "GET" };
      continue;
    }
    const text = await res.text();
    const path = new URL(next).pathname;
    if (res.status === 200 && init.method === "GET" && /^\/interaction\/[\w-]+$/.test(path)) {
      next = `${next}/login`;
      init = {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ [LOGIN_PROMPT_EMAIL]: email }).toString(),
      };
      continue;
    }
    return { status: res.status, page: text };
  }
  throw new Error("test IdP: too many redirects");
}

/** oidc-provider's storage, in memory; entries expire as the provider asks. */
function memoryAdapter(
  store: Map<string, { payload: AdapterPayload; expiresAt: number }>,
  model: string,
): Adapter {
  const key = (id: string) => `${model}:${id}`;
  const live = (k: string) => {
    const entry = store.get(k);
    if (!entry || entry.expiresAt <= Date.now()) {
      store.delete(k);
      return undefined;
    }
    return entry.payload;
  };
  const findBy = (field: "uid" | "userCode", value: string) => {
    for (const [k] of store) {
      if (k.startsWith(`${model}:`)) {
        const payload = live(k);
        if (payload?.[field] === value) {
          return payload;
        }
      }
    }
    return undefined;
  };
  return {
    upsert: async (id, payload, expiresIn) => {
      const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY;
      store.set(key(id), { payload, expiresAt });
    },
    find: async (id) => live(key(id)),
    findByUid: async (uid) => findBy("uid", uid),
    findByUserCode: async (userCode) => findBy("userCode", userCode),
    consume: async (id) => {
      const payload = live(key(id));
      if (payload) {
        payload.consumed = Math.floor(Date.now() / 1000);
      }
    },
    destroy: async (id) => {
      store.delete(key(id));
    },
    revokeByGrantId: async (grantId) => {
      for (const [k, entry] of store) {
        if (entry.payload.grantId === grantId) {
          store.delete(k);
        }
      }
    },
  };
}

function loginForm(uid: string, error: string): string {
  return `${error ? `<p role="alert">${escapeHtml(error)}</p>` : ""}
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
  <label>Email <input type="email" name="${LOGIN_PROMPT_EMAIL}" autocomplete="username" required autofocus></label>
  <button type="submit">Continue</button>
</form>`;
}

function page(res: ServerResponse, status: number, title: string, body: string) {
  res
    .writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" })
    .end(`<!doctype html><html><head><title>Test IdP: ${escapeHtml(title)}</title></head>
<body><h1>Test IdP: ${escapeHtml(title)}</h1>${body}</body></html>`);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
