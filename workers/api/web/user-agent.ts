// A session's browser in plain words for the Account page ("Chrome on Windows"), read from the
// User-Agent it signed in with. Display only: a user agent is whatever the client claims.

const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(?:e|A|iOS)?\/\d/, "Edge"],
  [/\b(?:OPR|Opera)\/\d/, "Opera"],
  [/\bSamsungBrowser\/\d/, "Samsung Internet"],
  [/\b(?:Firefox|FxiOS)\/\d/, "Firefox"],
  [/\b(?:Chrome|CriOS|HeadlessChrome|Chromium)\/\d/, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\/\d/, "Safari"],
  [/\bcurl\/\d/, "curl"],
];

const SYSTEMS: Array<[RegExp, string]> = [
  [/\biPhone\b/, "iPhone"],
  [/\biPad\b/, "iPad"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b/, "Linux"],
];

export function describeUserAgent(userAgent: string | null): string {
  if (!userAgent) {
    return "Unknown browser";
  }
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) {
    return `${browser} on ${system}`;
  }
  return browser ?? (system ? `A browser on ${system}` : "Unknown browser");
}
