// The control plane of the test OpenID provider (test/support/oidc-idp.ts), over plain fetch: usable
// from workerd (tests in test/workers/, which get the provider's URL from `inject("idpUrl")`) and from
// Node. Nothing here imports Node modules.

/** A relying party registered at the provider: what an owner registers at Google, Entra ID or Okta. */
export type IdpClient = {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** How the client authenticates at the token endpoint (default client_secret_basic; both are accepted). */
  tokenEndpointAuthMethod?: "client_secret_basic" | "client_secret_post";
};

/** A person at the provider. */
export type IdpAccount = {
  /** Stable subject; defaults to one derived from the email. */
  sub?: string;
  email: string;
  /** `true`/`false` is sent as `email_verified`; `null` omits the claim (as Entra ID does by default). */
  emailVerified?: boolean | null;
  name?: string;
  /**
   * Okta's org authorization server: a "thin" ID token from the code flow, `email` without
   * `email_verified`, which only the UserInfo endpoint sends.
   */
  emailVerifiedOnlyAtUserinfo?: boolean;
  /** Entra ID's optional claim `xms_edov` (email domain owner verified) in the ID token; omitted when unset. */
  xmsEdov?: boolean;
  /** A disabled account cannot sign in (the login form refuses it) and `findAccount` refuses it. */
  disabled?: boolean;
  /**
   * How the login form refuses a disabled account: its own 403 page (default, as Google and Okta do),
   * or a redirect back to the client with `error=access_denied` (as some tenants are set up to), which
   * the relying party sees and records.
   */
  disabledAnswer?: "page" | "access_denied";
};

/**
 * Rogue mode: the client's NEXT token response carries an ID token altered as a real provider never
 * issues one, re-signed with the provider's own key (same `kid`), so it verifies by signature and fails
 * only on the claim under test. `foreignKey` signs with another key under the same `kid` instead.
 */
export type IdpRogue = {
  clientId: string;
  /** Claims to set, e.g. `{ iss: "http://evil" }`, `{ aud: "another-client" }`, `{ nonce: "x" }`. */
  set?: Record<string, unknown>;
  /** Claims to remove. */
  unset?: string[];
  /** Sets `exp` to now + this many seconds (negative: expired) and `iat` an hour before `exp`. */
  expiresInSeconds?: number;
  foreignKey?: boolean;
};

/** What driving an authorization request through the provider's login ended with. */
export type IdpAuthorizeResult =
  /** The redirect to the client's callback (`code`, `state`, `iss`, or `error`). */
  | { callback: string }
  /** The provider stopped on a page of its own: e.g. 403 "This account is disabled". */
  | { status: number; page: string };

export type IdpControl = {
  issuer: string;
  addClient(client: IdpClient): Promise<void>;
  /** Adds or replaces (by email) an account; returns its `sub`. */
  addAccount(account: IdpAccount): Promise<string>;
  setDisabled(email: string, disabled: boolean): Promise<void>;
  rogue(rogue: IdpRogue): Promise<void>;
  /**
   * Follows an authorization URL (as the relying party redirected to it) through the provider's login
   * form as `email`, with a fresh provider session, and returns where the provider sends the browser.
   */
  authorize(url: string, email: string): Promise<IdpAuthorizeResult>;
};

/** The control plane of a running provider, by its issuer URL. */
export function idpControl(issuer: string): IdpControl {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${issuer}/__harness/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new Error(`test IdP ${path}: ${res.status} ${text}`);
    }
    return JSON.parse(text) as unknown;
  };
  return {
    issuer,
    addClient: async (client) => {
      await post("clients", client);
    },
    addAccount: async (account) => ((await post("accounts", account)) as { sub: string }).sub,
    setDisabled: async (email, disabled) => {
      await post("disabled", { email, disabled });
    },
    rogue: async (rogue) => {
      await post("rogue", rogue);
    },
    authorize: async (url, email) => (await post("authorize", { url, email })) as IdpAuthorizeResult,
  };
}
