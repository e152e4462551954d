import { expect } from "vitest";
import { call, json } from "../helpers/world";

export type Agent = Record<string, any>;

/** Creates an agent with a team key (or a user key under /team/{teamId}) and returns its body. */
export async function createAgent(key: string, body: Record<string, unknown> = {}, prefix = ""): Promise<Agent> {
  const res = await call("POST", `${prefix}/agent`, { key, body: { name: "Helper", ...body } });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  return json(res);
}

export async function putAgent(key: string, id: string, body: Record<string, unknown>) {
  return call("PUT", `/agent/${id}`, { key, body });
}

export async function expectBadRequest(res: Response, field: string) {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.error).toBe("Bad Request");
  expect(body.message).toContain(field);
  expect((body.fields as { field: string }[]).map((f) => f.field).some((f) => f === field || f.startsWith(`${field}.`))).toBe(
    true,
  );
  return body;
}
