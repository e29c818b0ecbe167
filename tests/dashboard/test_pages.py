"""Keys, contacts, calls, events and webhooks pages, over HTTP in process (both databases)."""

from __future__ import annotations

import html
import re

import httpx
import orjson
import pytest
from sqlalchemy import select

from hookline.delivery import manager
from hookline.domain import accounts, call_schemas, keys
from hookline.domain import contacts as contacts_domain
from hookline.domain.events import list_events
from hookline.storage.db import Database
from hookline.storage.models import deliveries, users
from hookline.timeutil import utcnow
from tests.dashboard.conftest import Dash, csrf_from

CONTACT = {"first_name": "Ada", "last_name": "Lovelace", "phone_number": "+44 20 7946 0958"}


async def _account_id(db: Database, email: str) -> str:
    async with db.read() as conn:
        row = (await conn.execute(select(users.c.account_id).where(users.c.email == email))).one()
    return str(row.account_id)


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_key_is_shown_once_works_and_revokes(
    signed_in: Dash, client: httpx.AsyncClient
) -> None:
    key = await signed_in.create_key("billing server", ["contacts:read"])
    again = await signed_in.get("/dashboard/keys")
    assert key not in again.text  # shown once only
    assert key[:14] in again.text and "billing server" in again.text
    assert "contacts:read" in again.text and "never" in again.text  # scopes, last used
    assert (await client.get("/v1/contacts", headers=_bearer(key))).status_code == 200
    # The scopes chosen are the scopes the key has.
    denied = await client.post("/v1/contacts", headers=_bearer(key), json=CONTACT)
    assert denied.status_code == 403

    key_id = re.search(r"/dashboard/keys/(key_[0-9a-f]+)/revoke", again.text)
    assert key_id
    confirm_path = f"/dashboard/keys/{key_id.group(1)}/revoke"
    confirm = await signed_in.get(confirm_path)
    assert confirm.status_code == 200 and "Revoke key" in confirm.text
    revoked = await signed_in.post(confirm_path, {}, token_from=confirm_path)
    assert revoked.status_code == 303
    assert "was revoked" in (await signed_in.get("/dashboard/keys")).text
    assert (await client.get("/v1/contacts", headers=_bearer(key))).status_code == 401


async def test_key_form_errors(signed_in: Dash, db: Database) -> None:
    response = await signed_in.post("/dashboard/keys", {"name": ""}, token_from="/dashboard/keys")
    assert response.status_code == 422
    assert "Give the key a name" in response.text and "Choose at least one scope" in response.text
    async with db.read() as conn:
        assert await keys.list_keys(conn, await _account_id(db, signed_in.email)) == []


async def test_posts_without_a_valid_csrf_token_change_nothing(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    async with db.begin() as conn:
        contact = await contacts_domain.create_contact(
            conn, account_id, {"first_name": "Kept", "phone_number": "+15551234567"}
        )
    attempts = [
        ("/dashboard/keys", {"name": "sneaky", "scopes": "contacts:read"}),
        (f"/dashboard/contacts/{contact['id']}/delete", {}),
        ("/dashboard/contacts", {"first_name": "X", "phone_number": "+15551234568"}),
        ("/dashboard/webhooks", {"url": "http://127.0.0.1:9/x", "events": "contact.created"}),
        ("/dashboard/logout", {}),
    ]
    for path, data in attempts:
        for token in (None, "forged-token"):
            form = {**data, **({"csrf_token": token} if token else {})}
            response = await signed_in.http.post(path, data=form)
            assert response.status_code == 403, path
            assert "This form has expired" in response.text
    async with db.read() as conn:
        assert await keys.list_keys(conn, account_id) == []
        assert await contacts_domain.get_contact(conn, account_id, contact["id"]) is not None
        listed = await contacts_domain.list_contacts(
            conn, account_id, contacts_domain.ContactFilters(), limit=10
        )
    assert [c["id"] for c in listed] == [contact["id"]]
    assert (await signed_in.get("/dashboard/keys")).status_code == 200  # still logged in


async def test_contact_lifecycle_through_the_ui_fires_the_api_events(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    invalid = await signed_in.post(
        "/dashboard/contacts",
        {"first_name": " ", "phone_number": "555", "email": "nope"},
        token_from="/dashboard/contacts/new",
    )
    assert invalid.status_code == 422
    # The API's own messages, next to their inputs.
    assert 'id="e-phone_number"' in invalid.text and "E.164" in invalid.text
    assert 'id="e-first_name"' in invalid.text and 'id="e-email"' in invalid.text
    assert 'value="555"' in invalid.text  # what was typed is kept

    created = await signed_in.post(
        "/dashboard/contacts",
        {**CONTACT, "tags": "vip, vip, newsletter", "email": "ADA@Example.com"},
        token_from="/dashboard/contacts/new",
    )
    assert created.status_code == 303
    path = created.headers["location"]
    contact_id = path.rsplit("/", 1)[1]
    detail = await signed_in.get(path)
    assert "Contact Ada created." in detail.text
    assert "+442079460958" in detail.text  # normalised exactly as the API does
    async with db.read() as conn:
        contact = await contacts_domain.get_contact(conn, account_id, contact_id)
    assert contact is not None and contact["tags"] == ["vip", "newsletter"]

    edit_path = f"{path}/edit"
    edit = await signed_in.get(edit_path)
    assert 'value="vip, newsletter"' in edit.text
    updated = await signed_in.post(
        edit_path,
        {**CONTACT, "company": "Analytical Engines", "tags": "vip", "email": ""},
        token_from=edit_path,
    )
    assert updated.status_code == 303
    assert "Contact saved." in (await signed_in.get(path)).text
    cleared = await signed_in.post(edit_path, {**CONTACT, "first_name": ""}, token_from=edit_path)
    assert cleared.status_code == 422 and 'id="e-first_name"' in cleared.text

    deleted = await signed_in.post(f"{path}/delete", {}, token_from=f"{path}/delete")
    assert deleted.status_code == 303
    assert (await signed_in.get(path)).status_code == 404
    async with db.read() as conn:
        events = await list_events(conn, account_id, limit=10)
    assert [e["type"] for e in events] == ["contact.deleted", "contact.updated", "contact.created"]
    assert events[1]["previous_attributes"] == {
        "company": None,
        "tags": ["vip", "newsletter"],
        "email": "ADA@example.com",
    }


async def test_contacts_search_and_pages(signed_in: Dash, db: Database) -> None:
    account_id = await _account_id(db, signed_in.email)
    async with db.begin() as conn:
        for n in range(30):
            await contacts_domain.create_contact(
                conn,
                account_id,
                {"first_name": f"Person{n:02d}", "phone_number": f"+1555123{n:04d}", "tags": []},
            )
    first = await signed_in.get("/dashboard/contacts")
    assert "Person29" in first.text and "Person05" in first.text and "Person04" not in first.text
    older = re.search(r'href="([^"]+)" rel="next"', first.text)
    assert older
    second = await signed_in.get(older.group(1).replace("&amp;", "&"))
    assert "Person04" in second.text and "Person05" not in second.text
    assert 'rel="next"' not in second.text
    found = await signed_in.get("/dashboard/contacts?search=person07")
    assert "Person07" in found.text and "Person08" not in found.text
    nothing = await signed_in.get("/dashboard/contacts?search=zzz")
    assert "No contact matches" in nothing.text


async def test_empty_states_say_what_to_do(signed_in: Dash) -> None:
    expectations = {
        "/dashboard/keys": "Create one below",
        "/dashboard/webhooks": "Add one",
        "/dashboard/contacts": "Add one here",
        "/dashboard/calls": "POST /v1/calls",
        "/dashboard/events": "No events yet",
    }
    for path, hint in expectations.items():
        page = await signed_in.get(path)
        assert page.status_code == 200 and hint in page.text, path


async def test_calls_and_events_pages(
    signed_in: Dash, db: Database, client: httpx.AsyncClient
) -> None:
    key = await signed_in.create_key("calls", ["calls:write", "contacts:write"])
    contact = await client.post("/v1/contacts", headers=_bearer(key), json=CONTACT)
    call = await client.post(
        "/v1/calls",
        headers=_bearer(key),
        json={"call_type": "inbound", "customer_phone_number": "+442079460958"},
    )
    assert call.status_code == 201, call.text
    call_id = call.json()["id"]
    done = await client.post(
        f"/v1/calls/{call_id}/complete", headers=_bearer(key), json={"call_status": "busy"}
    )
    assert done.status_code == 200, done.text
    listing = await signed_in.get("/dashboard/calls")
    assert call_id in listing.text and "busy" in listing.text
    assert call_id not in (await signed_in.get("/dashboard/calls?status=completed")).text
    analysed = await client.post(
        f"/v1/calls/{call_id}/analysis", headers=_bearer(key), json={"budget_usd": 4321}
    )
    assert analysed.status_code == 200, analysed.text
    detail = await signed_in.get(f"/dashboard/calls/{call_id}")
    assert "Ada" in detail.text  # linked to the contact by phone number
    assert "Outcome" in detail.text and "budget_usd" in detail.text and "4321" in detail.text
    contact_page = await signed_in.get(f"/dashboard/contacts/{contact.json()['id']}")
    assert call_id in contact_page.text

    events = await signed_in.get("/dashboard/events")
    for kind in ("contact.created", "call.started", "call.completed"):
        assert kind in events.text
    only_calls = await signed_in.get("/dashboard/events?type=call.started")
    assert "call.started" in only_calls.text and "<td>contact.created</td>" not in only_calls.text
    event_id = re.search(r"/dashboard/events/(evt_[0-9a-f]+)", events.text)
    assert event_id
    jump = await signed_in.get(f"/dashboard/events?search={event_id.group(1)}")
    assert jump.status_code == 302
    event_page = await signed_in.get(jump.headers["location"])
    assert event_id.group(1) in event_page.text and "&#34;data&#34;" in event_page.text


async def test_other_accounts_pages_are_404(
    signed_in: Dash, other_signed_in: Dash, db: Database
) -> None:
    created = await signed_in.post(
        "/dashboard/contacts", CONTACT, token_from="/dashboard/contacts/new"
    )
    contact_path = created.headers["location"]
    hook = await signed_in.post(
        "/dashboard/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        token_from="/dashboard/webhooks/new",
    )
    assert hook.status_code == 303, hook.text
    webhook_path = hook.headers["location"]
    for path in (
        contact_path,
        f"{contact_path}/edit",
        f"{contact_path}/delete",
        webhook_path,
        f"{webhook_path}/edit",
        f"{webhook_path}/delete",
        f"{webhook_path}/deliveries/dlv_0",
    ):
        response = await other_signed_in.get(path)
        assert response.status_code == 404, path
        assert "There is no such" in response.text
    # A valid token of the other account doesn't help either.
    token = csrf_from((await other_signed_in.get("/dashboard")).text)
    for path in (f"{contact_path}/delete", f"{webhook_path}/delete", f"{webhook_path}/disable"):
        response = await other_signed_in.http.post(path, data={"csrf_token": token})
        assert response.status_code == 404, path
    assert (await signed_in.get(contact_path)).status_code == 200
    assert "badge-active" in (await signed_in.get(webhook_path)).text


@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/contacts/%00",
        "/dashboard/contacts/%00/erase",
        "/dashboard/erasures/%00",
        "/dashboard/webhooks/%00/edit",
        "/dashboard/webhooks/wh-x/deliveries/%00",
        "/dashboard/calls/%00",
        "/dashboard/events/%00",
        "/dashboard/keys/%00/revoke",
        "/dashboard/team/members/%00/remove",
    ],
)
async def test_a_path_id_that_cannot_be_an_id_is_a_404_page(signed_in: Dash, path: str) -> None:
    # PostgreSQL refuses a NUL in text: the id must never reach it.
    response = await signed_in.get(path)
    assert response.status_code == 404, path
    assert "There is no such" in response.text


async def test_webhook_lifecycle(signed_in: Dash, db: Database) -> None:
    account_id = await _account_id(db, signed_in.email)
    bad = await signed_in.post(
        "/dashboard/webhooks",
        {"url": "ftp://x", "events": []},
        token_from="/dashboard/webhooks/new",
    )
    assert bad.status_code == 422
    assert 'id="e-url"' in bad.text or "at least one event" in bad.text

    created = await signed_in.post(
        "/dashboard/webhooks",
        {"url": "http://127.0.0.1:9/hook", "name": "CRM", "events": ["contact.created"]},
        token_from="/dashboard/webhooks/new",
    )
    assert created.status_code == 303, created.text
    path = created.headers["location"]
    webhook_id = path.rsplit("/", 1)[1]
    page = await signed_in.get(path)
    secret = re.search(r'id="shown-secret"[^>]*value="(whsec_[^"]+)"', page.text)
    assert secret, "the signing secret is shown after creation"
    page_again = await signed_in.get(path)
    assert secret.group(1) not in page_again.text and "whsec_********" in page_again.text
    assert "Nothing delivered yet" in page_again.text

    listing = await signed_in.get("/dashboard/webhooks")
    assert "CRM" in listing.text and "http://127.0.0.1:9/hook" in listing.text
    assert "none yet" in listing.text

    edit = await signed_in.post(
        f"{path}/edit",
        {
            "url": "http://127.0.0.1:9/other",
            "name": "",
            "events": ["call.started", "call.completed"],
        },
        token_from=f"{path}/edit",
    )
    assert edit.status_code == 303
    page = await signed_in.get(path)
    assert "http://127.0.0.1:9/other" in page.text and "call.completed" in page.text

    assert (await signed_in.post(f"{path}/disable", {}, token_from=path)).status_code == 303
    page = await signed_in.get(path)
    assert "badge-disabled" in page.text and "Webhook disabled" in page.text
    refused = await signed_in.post(f"{path}/test", {}, token_from=path)
    assert "enable it first" in (await signed_in.get(refused.headers["location"])).text
    assert (await signed_in.post(f"{path}/enable", {}, token_from=path)).status_code == 303

    rotated = await signed_in.post(f"{path}/rotate-secret", {}, token_from=f"{path}/rotate-secret")
    assert rotated.status_code == 303
    new_secret = re.search(r'value="(whsec_[^"]+)"', (await signed_in.get(path)).text)
    assert new_secret and new_secret.group(1) != secret.group(1)

    tested = await signed_in.post(f"{path}/test", {}, token_from=path)
    assert tested.status_code == 303
    assert "Test event evt_" in (await signed_in.get(path)).text
    async with db.read() as conn:
        events = await list_events(conn, account_id, limit=5, event_type="webhook.test")
    assert events and events[0]["data"]["webhook_id"] == webhook_id

    gone = await signed_in.post(f"{path}/delete", {}, token_from=f"{path}/delete")
    assert gone.status_code == 303
    assert (await signed_in.get(path)).status_code == 404


async def test_delivery_log_and_retry(signed_in: Dash, db: Database) -> None:
    created = await signed_in.post(
        "/dashboard/webhooks",
        {"url": "http://127.0.0.1:9/hook", "events": ["contact.created"]},
        token_from="/dashboard/webhooks/new",
    )
    path = created.headers["location"]
    await signed_in.post(f"{path}/test", {}, token_from=path)
    await manager.dispatch_events(db, now=utcnow())  # the worker's fan-out step, run here
    page = await signed_in.get(path)
    delivery = re.search(
        r'href="(/dashboard/webhooks/[^"]+/deliveries/(dlv_[0-9a-f]+))"', page.text
    )
    assert delivery, page.text
    assert "webhook.test" in page.text and "badge-pending" in page.text
    async with db.begin() as conn:
        await conn.execute(
            deliveries.update()
            .where(deliveries.c.id == delivery.group(2))
            .values(status="failed", next_attempt_at=None)
        )
    detail = await signed_in.get(delivery.group(1))
    assert "badge-failed" in detail.text and "No attempt yet" in detail.text
    retried = await signed_in.post(f"{delivery.group(1)}/retry", {}, token_from=delivery.group(1))
    assert retried.status_code == 303
    detail = await signed_in.get(retried.headers["location"])
    assert "Retry queued" in detail.text and "badge-pending" in detail.text


async def test_settings_show_the_accounts_own_id_to_copy(
    signed_in: Dash, other_signed_in: Dash, db: Database
) -> None:
    page = await signed_in.get("/dashboard/settings")
    assert page.status_code == 200
    async with db.read() as conn:
        account_id = await conn.scalar(
            select(users.c.account_id).where(users.c.email == signed_in.email)
        )
    field = re.search(r'<input id="account-id"[^>]* readonly value="([^"]+)"', page.text)
    assert field and field.group(1) == account_id
    assert 'data-copy="account-id"' in page.text
    assert f"hookline users add --account {account_id} " in page.text
    assert 'href="/dashboard/settings" aria-current="page"' in page.text
    theirs = await other_signed_in.get("/dashboard/settings")
    assert account_id not in theirs.text


async def test_settings_change_the_longest_call_as_the_api_does(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    page = await signed_in.get("/dashboard/settings")
    assert 'value="3600"' in page.text
    refused = await signed_in.post(
        "/dashboard/settings/calls", {"max_call_seconds": "59"}, token_from="/dashboard/settings"
    )
    assert refused.status_code == 422 and 'id="e-max_call_seconds"' in refused.text
    assert 'value="59"' in refused.text
    for typed in ("9" * 5000, "\u0661\u0662\u0660"):  # past int()'s digit limit; not ASCII digits
        refused = await signed_in.post(
            "/dashboard/settings/calls",
            {"max_call_seconds": typed},
            token_from="/dashboard/settings",
        )
        assert refused.status_code == 422 and 'id="e-max_call_seconds"' in refused.text
    saved = await signed_in.post(
        "/dashboard/settings/calls", {"max_call_seconds": "120"}, token_from="/dashboard/settings"
    )
    assert saved.status_code == 303
    async with db.read() as conn:
        assert (await accounts.get_account(conn, account_id))["max_call_seconds"] == 120
    assert 'value="120"' in (await signed_in.get("/dashboard/settings")).text


SCHEMA = {
    "type": "object",
    "properties": {"budget": {"type": "integer", "minimum": 0}},
    "required": ["budget"],
}


async def test_settings_save_and_show_the_call_analysis_schema_as_the_api_does(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    empty = await signed_in.get("/dashboard/settings")
    assert 'name="analysis_schema"' in empty.text and "None yet" in empty.text
    saved = await signed_in.post(
        "/dashboard/settings/analysis-schema",
        {"analysis_schema": orjson.dumps(SCHEMA).decode()},
        token_from="/dashboard/settings",
    )
    assert saved.status_code == 303
    async with db.read() as conn:
        stored = await call_schemas.current_schema(conn, account_id)
    assert (stored["version"], stored["schema"]) == (1, SCHEMA)
    page = (await signed_in.get("/dashboard/settings")).text
    shown = re.search(r'<textarea id="f-analysis_schema"[^>]*>([^<]*)</textarea>', page)
    assert shown and orjson.loads(html.unescape(shown.group(1))) == SCHEMA
    assert '\n  "type": "object",\n' in html.unescape(shown.group(1))  # pretty, not one line
    assert "Version 1, saved" in page


async def test_settings_show_the_apis_refusal_of_a_schema_next_to_the_field(
    signed_in: Dash, db: Database
) -> None:
    account_id = await _account_id(db, signed_in.email)
    refusals = {
        '{"type": "object", "properties": {"budget": {"type": "integer", "pattern": "x"}}}': (
            "properties.budget.pattern: keyword &#39;pattern&#39; is not supported"
        ),
        '{"type": "object",': "not valid JSON",
        "[1, 2]": "should be a valid dictionary",
        "": "enter a JSON Schema",
    }
    for source, message in refusals.items():
        refused = await signed_in.post(
            "/dashboard/settings/analysis-schema",
            {"analysis_schema": source},
            token_from="/dashboard/settings",
        )
        assert refused.status_code == 422, source
        error = re.search(r'<p class="error" id="e-analysis_schema">([^<]*)</p>', refused.text)
        assert error and message in error.group(1), (source, refused.text)
        assert 'aria-invalid="true"' in refused.text
        assert source in html.unescape(refused.text)  # kept for correcting
    async with db.read() as conn:
        assert (await call_schemas.current_schema(conn, account_id))["version"] is None
