// Types for issue-keys.mjs (plain JavaScript so that Node runs it without a build step).

export type KeyType = "publishable" | "secret" | "user";

export declare const KEY_PREFIXES: Record<KeyType, string>;

export type IssueInput = {
  email: string;
  userName?: string | null;
  /** An existing user: no user row is written, only keys (and a team if teamName is given). */
  userId?: string;
  /** Create a team with this name, the user as OWNER. */
  teamName?: string;
  teamMetadata?: Record<string, string>;
  /** An existing team of the user: no team row is written, only keys. */
  teamId?: string;
  /** false: no publishable and secret key for the team. Default true. */
  teamKeys?: boolean;
  /** The `name` of the key rows. */
  keyName?: string;
};

export type IssuedUser = {
  userId: string;
  teamId: string | null;
  email: string;
  publishableKey: string | null;
  secretKey: string | null;
  userKey: string;
  /** SQL statements without a trailing semicolon, to run in this order (or as one batch). */
  statements: string[];
};

export declare function randomString(length: number): string;
export declare function newId(prefix: string): string;
export declare function sha256Hex(value: string): Promise<string>;
export declare function generateKey(type: KeyType): Promise<{ plaintext: string; hash: string; prefix: string }>;
export declare function sqlLiteral(value: string | number | null | undefined): string;
export declare function issueUser(input: IssueInput): Promise<IssuedUser>;
export declare function toSqlFile(statements: string[]): string;
export declare function keyCheckQuery(keys: string[], userId: string, teamId: string): Promise<string>;
