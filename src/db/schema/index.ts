// Every table of the service, one file per area. drizzle-kit reads this module to generate migrations/.
export * from "./teams";
