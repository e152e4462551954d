// Every table of the service, one file per area. drizzle-kit reads this module to generate migrations/.
export * from "./teams";
export * from "./events";
export * from "./agents";
export * from "./webhooks";
export * from "./chats";
export * from "./files";
