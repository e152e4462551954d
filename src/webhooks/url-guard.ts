/**
 * Which webhook targets the service may call. In production a target must be https and must not
 * be, or resolve to, a loopback, private, link-local, unique-local (or otherwise non-public)
 * address. Local development (WEBHOOK_ALLOW_PRIVATE_TARGETS="true", never honoured when
 * ENVIRONMENT="production") also allows http and any host, so a receiver on localhost works.
 *
 * Workers' fetch cannot pin the address it connects to, so the DNS check (DNS-over-HTTPS, at
 * creation and before every send) narrows but cannot close a DNS-rebinding window; redirects are
 * never followed, so a public host cannot bounce a delivery to a private one.
 */

export type UrlPolicy = {
  allowPrivate: boolean;
  /** DNS-over-HTTPS JSON endpoint (application/dns-json); empty = literal checks only. */
  resolver: string;
};

export function urlPolicy(env: Env): UrlPolicy {
  return {
    allowPrivate: env.ENVIRONMENT !== "production" && env.WEBHOOK_ALLOW_PRIVATE_TARGETS === "true",
    resolver: env.WEBHOOK_DNS_RESOLVER ?? "",
  };
}

export const MAX_URL_LENGTH = 2048;

/** Host names that only mean something on a local network. */
const LOCAL_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa", ".localdomain", ".lan", ".intranet"];

function parseIPv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return octets.every((o) => o >= 0 && o <= 255) ? octets : null;
}

/** Non-public IPv4 ranges: this network, private, shared (CGNAT), loopback, link-local, benchmark, multicast, reserved. */
export function isNonPublicIPv4(octets: number[]): boolean {
  const [a = 0, b = 0, c = 0] = octets;
  return (
    a === 0 ||
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) ||
    a === 127 ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 0 && c === 0) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
  );
}

/** Eight 16-bit groups of an IPv6 address (no brackets, no zone), or null. */
function parseIPv6(host: string): number[] | null {
  let text = host;
  const groups: number[] = [];
  // An embedded dotted IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const tail = text.match(/:(\d+\.\d+\.\d+\.\d+)$/);
  if (tail?.[1]) {
    const v4 = parseIPv4(tail[1]);
    if (!v4) return null;
    text = text.slice(0, -tail[1].length) + `${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0] ?? "");
  const rest = halves.length === 2 ? parse(halves[1] ?? "") : [];
  if ([...head, ...rest].some(Number.isNaN)) return null;
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups.push(...head, ...new Array<number>(missing).fill(0), ...rest);
  } else {
    if (head.length !== 8) return null;
    groups.push(...head);
  }
  return groups;
}

export function isNonPublicIPv6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const v4 = (hi: number, lo: number) => [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
  const firstFiveZero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (firstFiveZero && g5 === 0 && g6 === 0 && (g7 === 0 || g7 === 1)) return true; // :: and ::1
  if (firstFiveZero && g5 === 0xffff) return isNonPublicIPv4(v4(g6, g7)); // IPv4-mapped
  if (firstFiveZero && g5 === 0) return isNonPublicIPv4(v4(g6, g7)); // IPv4-compatible (deprecated)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return isNonPublicIPv4(v4(g6, g7)); // NAT64
  if (g0 === 0x2002) return isNonPublicIPv4(v4(g1, g2)); // 6to4
  if ((g0 & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return true; // site-local (deprecated) fec0::/10
  if ((g0 & 0xff00) === 0xff00) return true; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return true; // documentation
  return false;
}

/** Whether an IP address literal (v4 or v6, brackets allowed) is non-public; null when it is not an IP. */
export function classifyIp(address: string): boolean | null {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const v4 = parseIPv4(bare);
  if (v4) return isNonPublicIPv4(v4);
  if (bare.includes(":")) {
    const v6 = parseIPv6(bare);
    return v6 ? isNonPublicIPv6(v6) : true; // an unparseable v6 literal is refused
  }
  return null;
}

/**
 * The literal checks, without DNS: why the URL is refused, or null. Same rules at creation and
 * at send time.
 */
export function literalUrlProblem(raw: string, policy: UrlPolicy): string | null {
  if (raw.length > MAX_URL_LENGTH) return `the url is longer than ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "the url must be an absolute URL such as https://example.com/webhooks";
  }
  if (url.protocol !== "https:" && !(policy.allowPrivate && url.protocol === "http:")) {
    return policy.allowPrivate ? "the url must use https or http" : "the url must use https";
  }
  if (url.username || url.password) return "the url must not carry a user name or password";
  if (policy.allowPrivate) return null;

  // WHATWG URL parsing has already turned 2130706433, 0x7f.1 and similar into dotted IPv4.
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const ip = classifyIp(host);
  if (ip === true) return `the host ${host} is a loopback, private, link-local or otherwise non-public address`;
  if (ip === false) return null;
  if (host === "localhost" || LOCAL_SUFFIXES.some((s) => host.endsWith(s))) {
    return `the host ${host} is a local network name`;
  }
  if (!host.includes(".")) return `the host ${host} is not a public domain name`;
  return null;
}

type DohAnswer = { type: number; data: string; TTL?: number };
type DohResponse = { Status: number; Answer?: DohAnswer[] };

const dnsCache = new Map<string, { addresses: string[]; expires: number }>();

export class DnsLookupError extends Error {}

/** A and AAAA records of a host through DNS-over-HTTPS (JSON API), cached per isolate by TTL. */
export async function resolveHost(host: string, resolver: string): Promise<string[]> {
  const cached = dnsCache.get(host);
  if (cached && cached.expires > Date.now()) return cached.addresses;
  const addresses: string[] = [];
  let ttl = 300;
  for (const type of ["A", "AAAA"]) {
    const url = `${resolver}?name=${encodeURIComponent(host)}&type=${type}`;
    let res: Response;
    try {
      res = await fetch(url, { headers: { accept: "application/dns-json" }, signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw new DnsLookupError(`DNS lookup of ${host} failed: ${String(err)}`);
    }
    if (!res.ok) throw new DnsLookupError(`DNS lookup of ${host} failed: resolver answered ${res.status}`);
    const body = (await res.json()) as DohResponse;
    // 0 = NOERROR, 3 = NXDOMAIN (no addresses); anything else is a resolver failure.
    if (body.Status !== 0 && body.Status !== 3) throw new DnsLookupError(`DNS lookup of ${host} failed: status ${body.Status}`);
    for (const answer of body.Answer ?? []) {
      if (answer.type === 1 || answer.type === 28) {
        addresses.push(answer.data);
        ttl = Math.min(ttl, Math.max(30, answer.TTL ?? 300));
      }
    }
  }
  dnsCache.set(host, { addresses, expires: Date.now() + ttl * 1000 });
  return addresses;
}

/**
 * Full check: literal rules, then (in production, when a resolver is configured) every address
 * the host resolves to must be public. Throws DnsLookupError when the resolver cannot answer.
 */
export async function urlProblem(raw: string, policy: UrlPolicy): Promise<string | null> {
  const literal = literalUrlProblem(raw, policy);
  if (literal || policy.allowPrivate || !policy.resolver) return literal;
  const host = new URL(raw).hostname.toLowerCase().replace(/\.$/, "");
  if (classifyIp(host) !== null) return null;
  const addresses = await resolveHost(host, policy.resolver);
  if (!addresses.length) return `the host ${host} does not resolve to any address`;
  const bad = addresses.find((a) => classifyIp(a) !== false);
  return bad ? `the host ${host} resolves to ${bad}, a loopback, private, link-local or otherwise non-public address` : null;
}
