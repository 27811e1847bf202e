import * as oauth from "oauth4webapi";

// Whether the provider vouches for the email (docs/accounts.md, "Single sign-on: setting up a
// provider"). Providers differ: Google puts `email_verified` in the ID token; Okta's org authorization
// server sends a "thin" ID token in the code flow, with `email` but `email_verified` only at its
// UserInfo endpoint; Entra ID never sends `email_verified`, but can add the optional claim `xms_edov`
// (email domain owner verified). In that order: the ID token's `email_verified`; if absent, UserInfo's
// (its `sub` must be the ID token's, and its email, if any, the same); if still absent, `xms_edov`.
// Anything but `true` is not verified.

export type EmailVerification = {
  email: string;
  verified: boolean;
  source: "id_token" | "userinfo" | "xms_edov" | "none";
};

export async function verifiedEmail(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  claims: oauth.IDToken,
  accessToken: string | undefined,
  options: oauth.UserInfoRequestOptions,
): Promise<EmailVerification> {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (typeof claims.email_verified === "boolean") {
    return { email, verified: claims.email_verified, source: "id_token" };
  }
  if (as.userinfo_endpoint && accessToken) {
    const response = await oauth.userInfoRequest(as, client, accessToken, options);
    const info = await oauth.processUserInfoResponse(as, client, claims.sub, response);
    if (typeof info.email_verified === "boolean") {
      const same = typeof info.email !== "string" || info.email.trim().toLowerCase() === email;
      return { email, verified: info.email_verified && same, source: "userinfo" };
    }
  }
  if (claims.xms_edov !== undefined) {
    return { email, verified: claims.xms_edov === true, source: "xms_edov" };
  }
  return { email, verified: false, source: "none" };
}
