/**
 * Smoke test of the TypeScript client against a live server (tests/clients runs it):
 *
 *     node dist/test/smoke.js BASE_URL API_KEY
 *
 * Creates, lists and deletes a contact and a webhook through the typed client; prints the ids
 * as JSON for the caller to check on the server. Any unexpected status exits non-zero.
 */
import { createHooklineClient, type Schemas } from "../src/index.js";

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

function expectStatus(response: Response, status: number, what: string): void {
  check(response.status === status, `${what}: HTTP ${response.status}, expected ${status}`);
}

const [baseUrl, apiKey] = process.argv.slice(2);
check(baseUrl !== undefined && apiKey !== undefined, "usage: smoke.js BASE_URL API_KEY");
const client = createHooklineClient({ baseUrl, apiKey });

const contactBody: Schemas["ContactCreate"] = {
  first_name: "Ada",
  last_name: "Lovelace",
  phone_number: "+14155552671",
  tags: ["typescript"],
};
const created = await client.POST("/v1/contacts", { body: contactBody });
expectStatus(created.response, 201, "create contact");
check(created.data !== undefined, "create contact: no body");
const contact: Schemas["ContactOut"] = created.data;
check(contact.first_name === "Ada" && contact.tags.includes("typescript"), "contact as sent");

const contacts = await client.GET("/v1/contacts", { params: { query: { limit: 100 } } });
expectStatus(contacts.response, 200, "list contacts");
check(contacts.data?.some((c) => c.id === contact.id) === true, "the new contact is listed");

const contactPath = { params: { path: { contact_id: contact.id } } };
expectStatus((await client.DELETE("/v1/contacts/{contact_id}", contactPath)).response, 200, "delete contact");
const contactGone = await client.GET("/v1/contacts/{contact_id}", contactPath);
expectStatus(contactGone.response, 404, "deleted contact");
check(contactGone.error?.error.code === "not_found", "a typed error body");

const webhookBody: Schemas["WebhookCreate"] = {
  url: "http://127.0.0.1:9/hooks",
  events: ["contact.created", "call.completed"],
  filter: 'event.type == "call.completed" || event.data.first_name == "Ada"',
  headers: { "X-Api-Key": "gateway-key" },
  rate_limit: 10,
};
const hook = await client.POST("/v1/webhooks", { body: webhookBody });
expectStatus(hook.response, 201, "create webhook");
check(hook.data !== undefined, "create webhook: no body");
const webhook: Schemas["WebhookOut"] = hook.data;
check(
  webhook.secret?.startsWith("whsec_") === true && webhook.signing === "hmac" && webhook.auth === null &&
    webhook.headers["X-Api-Key"] === "********",
  "webhook as sent",
);

const webhooks = await client.GET("/v1/webhooks", {});
expectStatus(webhooks.response, 200, "list webhooks");
check(webhooks.data?.some((w) => w.id === webhook.id) === true, "the new webhook is listed");

const webhookPath = { params: { path: { webhook_id: webhook.id } } };
expectStatus((await client.DELETE("/v1/webhooks/{webhook_id}", webhookPath)).response, 200, "delete webhook");
expectStatus((await client.GET("/v1/webhooks/{webhook_id}", webhookPath)).response, 404, "deleted webhook");

console.log(JSON.stringify({ contact: contact.id, webhook: webhook.id }));
