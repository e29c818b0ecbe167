"""``POST /v1/contacts/bulk`` on SQLite and PostgreSQL: a result per row, matching on the
normalised key, one event per created or changed row delivered to a real receiver, none for
unchanged rows, refusals in the error body's words, idempotency and the route's body limit."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import orjson
from fastapi import FastAPI

from tests.conftest import Account, new_account
from tests.support.receiver import Receiver


def person(n: int, **fields: Any) -> dict[str, Any]:
    return {"first_name": f"P{n}", "phone_number": f"+1415555{n:04d}", **fields}


async def bulk(
    http: httpx.AsyncClient,
    owner: Account,
    rows: list[Any],
    match_on: str = "phone_number",
    **headers: str,
) -> httpx.Response:
    return await http.post(
        "/v1/contacts/bulk",
        json={"match_on": match_on, "contacts": rows},
        headers={**owner.headers, **headers},
    )


def statuses(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["index"] for r in results] == list(range(len(results)))
    return [r["status"] for r in results]


async def event_types(http: httpx.AsyncClient, owner: Account) -> list[str]:
    response = await http.get("/v1/events", params={"limit": 100}, headers=owner.headers)
    return [e["type"] for e in response.json()]


async def test_rows_are_created_updated_unchanged_with_one_event_per_change(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        hook = {"url": receiver.url, "events": ["contact.created", "contact.updated"]}
        assert (await http.post("/v1/webhooks", json=hook, headers=owner.headers)).is_success
        existing = await http.post(
            "/v1/contacts",
            json=person(1, email="Ada@example.com", tags=["old"]),
            headers=owner.headers,
        )
        rows = [
            # The same number spelled otherwise, and a change: updated.
            {"phone_number": "+1 415 555 0001", "tags": ["new"]},
            person(2),  # created
            {"phone_number": "+14155550001", "first_name": "P1"},  # nothing new: unchanged
        ]
        first = await bulk(http, owner, rows)
        assert statuses(first) == ["updated", "created", "unchanged"]
        results = first.json()["results"]
        assert results[0]["id"] == results[2]["id"] == existing.json()["id"]
        assert results[0]["error"] is None
        requests = await receiver.wait_for(3)  # the POST's, the update's, the creation's
        updated = next(r.json() for r in requests if r.json()["type"] == "contact.updated")
        assert updated["data"]["tags"] == ["new"]
        assert updated["previous_attributes"] == {"tags": ["old"]}
        # The same batch again changes nothing and fires nothing.
        assert statuses(await bulk(http, owner, rows)) == ["unchanged"] * 3
        assert (
            await event_types(http, owner)
            == [
                "contact.created",
                "contact.updated",
                "contact.created",
            ][::-1]
        )
        # By email: the domain's case does not matter, the local part's does.
        by_email = await bulk(
            http,
            owner,
            [{"email": "Ada@EXAMPLE.com", "company": "AE"}, {"email": "ada@example.com"}],
            match_on="email",
        )
        assert statuses(by_email) == ["updated", "refused"]
        assert by_email.json()["results"][0]["id"] == existing.json()["id"]
        assert set(by_email.json()["results"][1]["error"]["details"]["fields"][0]) == {
            "field",
            "message",
        }


async def test_refusals_name_the_field_and_leave_the_other_rows(
    http: httpx.AsyncClient, owner: Account
) -> None:
    for _ in range(2):  # two contacts with one number: a row matching both is ambiguous
        await http.post("/v1/contacts", json=person(9), headers=owner.headers)
    rows: list[Any] = [
        {"first_name": "No number"},
        person(9, notes="which one?"),
        person(3, email="not an email"),
        {"phone_number": "+14155550004"},  # no match, and no first_name to create one
        person(5, first_name="Nul\x00"),
        person(6, id="mine"),
        person(7, do_not_call_reason="without the flag"),
        person(8),
    ]
    response = await bulk(http, owner, rows)
    assert statuses(response) == ["refused"] * 7 + ["created"]
    fields = [
        [f["field"] for f in r["error"]["details"]["fields"]]
        for r in response.json()["results"][:-1]
    ]
    assert fields == [
        ["phone_number"],
        ["phone_number"],
        ["email"],
        ["first_name"],
        ["first_name"],
        ["id"],
        ["do_not_call_reason"],
    ]
    for result in response.json()["results"][:-1]:
        assert result["error"]["code"] == "validation_error" and result["id"] is None
    assert "matches 2 contacts" in response.json()["results"][1]["error"]["message"]


async def test_the_request_itself_is_checked(http: httpx.AsyncClient, owner: Account) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"match_on": "id", "contacts": [person(1)]}, "match_on"),
        ({"match_on": "email", "contacts": []}, "contacts"),
        ({"match_on": "email", "contacts": [person(1)] * 1001}, "contacts"),
        ({"match_on": "email", "contacts": {}}, "contacts"),
        ({"match_on": "email", "contacts": [person(1)], "extra": 1}, "extra"),
        ({"match_on": "email\x00", "contacts": [person(1)]}, "match_on"),
        ({"match_on": "email", "contacts": [person(1), "not an object"]}, "contacts"),
    ]
    for body, field in cases:
        response = await http.post("/v1/contacts/bulk", json=body, headers=owner.headers)
        assert response.status_code == 422, (body, response.text)
        assert field in {f["field"] for f in response.json()["error"]["details"]["fields"]}


async def test_a_thousand_rows_fit_the_routes_own_body_limit(
    http: httpx.AsyncClient, owner: Account
) -> None:
    rows = [person(n, notes="n" * 100, tags=["lead", "bulk"]) for n in range(1000)]
    body = orjson.dumps({"match_on": "phone_number", "contacts": rows})
    assert len(body) > 64 * 1024
    headers = {**owner.headers, "content-type": "application/json"}
    response = await http.post("/v1/contacts/bulk", content=body, headers=headers)
    assert statuses(response) == ["created"] * 1000
    listed = await http.get("/v1/contacts", params={"limit": 100}, headers=owner.headers)
    assert len(listed.json()) == 100
    # Past the route's 2 MiB: 413; other routes keep the 64 KiB default.
    huge = orjson.dumps({"match_on": "email", "contacts": ["x" * 1024] * 2100})
    assert (await http.post("/v1/contacts/bulk", content=huge, headers=headers)).status_code == 413
    big_contact = orjson.dumps({**person(1), "notes": "n" * 70_000})
    too_big = await http.post("/v1/contacts", content=big_contact, headers=headers)
    assert too_big.status_code == 413


async def test_idempotency_key_replays_the_first_results(
    http: httpx.AsyncClient, owner: Account
) -> None:
    rows = [person(n) for n in range(250)]  # three batches
    first = await bulk(http, owner, rows, **{"Idempotency-Key": "import-1"})
    assert statuses(first) == ["created"] * 250
    replay = await bulk(http, owner, rows, **{"Idempotency-Key": "import-1"})
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == first.json()
    other = await bulk(http, owner, rows[:1], **{"Idempotency-Key": "import-1"})
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    # Without the key, the same rows are unchanged.
    assert statuses(await bulk(http, owner, rows)) == ["unchanged"] * 250
    assert len(await event_types(http, owner)) == 100  # a page: 250 created, none since


async def test_scope_and_accounts(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    reader = await new_account(worker_app.state.db, scopes=["contacts:read"])
    assert (await bulk(http, reader, [person(1)])).status_code == 403
    theirs = await new_account(worker_app.state.db)
    await http.post("/v1/contacts", json=person(1), headers=theirs.headers)
    # Another account's contact with the same number is never matched: ours is created.
    mine = await bulk(http, owner, [person(1)])
    assert statuses(mine) == ["created"]
    their_list = await http.get("/v1/contacts", headers=theirs.headers)
    assert [c["id"] for c in their_list.json()] != [mine.json()["results"][0]["id"]]
    assert len(their_list.json()) == 1


async def test_export_streams_every_contact_as_safe_csv(
    http: httpx.AsyncClient, owner: Account, worker_app: FastAPI
) -> None:
    rows = [person(n) for n in range(1203)]  # more than two pages of the export
    rows[0] = person(0, first_name="=HYPERLINK(1)", tags=["a", "b"], notes="-2+3", company="@x")
    rows[1] = person(1, do_not_call=True, do_not_call_reason="asked", email="Bo@x.io")
    for start in range(0, len(rows), 1000):
        assert (await bulk(http, owner, rows[start : start + 1000])).status_code == 200
    theirs = await new_account(worker_app.state.db)
    await http.post("/v1/contacts", json=person(5000), headers=theirs.headers)
    response = await http.get("/v1/contacts/export", headers=owner.headers)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv")
    table = list(csv.DictReader(io.StringIO(response.text)))
    assert list(table[0]) == [
        "id", "first_name", "last_name", "phone_number", "email", "company", "tags", "notes",
        "do_not_call", "do_not_call_reason", "created_at", "updated_at",
    ]  # fmt: skip
    assert len(table) == 1203 and len({r["id"] for r in table}) == 1203
    by_name = {r["first_name"]: r for r in table}
    hostile = by_name["'=HYPERLINK(1)"]
    assert (hostile["tags"], hostile["notes"], hostile["company"]) == ("a;b", "'-2+3", "'@x")
    assert hostile["phone_number"] == "'+14155550000"
    flagged = by_name["P1"]
    assert (flagged["do_not_call"], flagged["do_not_call_reason"]) == ("true", "asked")
    assert by_name["P2"]["do_not_call"] == "false" and by_name["P2"]["email"] == ""
    assert "P5000" not in by_name
    reader = await new_account(worker_app.state.db, scopes=["calls:read"])
    assert (await http.get("/v1/contacts/export", headers=reader.headers)).status_code == 403
