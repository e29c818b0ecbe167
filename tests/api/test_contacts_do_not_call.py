"""A contact's do-not-call flag on SQLite and PostgreSQL: set on create and PATCH, listed and
filtered, carried by events to real receivers (and usable in CEL filters), and refusing calls."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import Account
from tests.support.api import field_errors
from tests.support.receiver import Receiver

ADA = {"first_name": "Ada", "phone_number": "+14155552671"}


async def create(http: httpx.AsyncClient, owner: Account, **fields: Any) -> Any:
    response = await http.post("/v1/contacts", json={**ADA, **fields}, headers=owner.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def patch(http: httpx.AsyncClient, owner: Account, contact_id: str, **fields: Any) -> Any:
    return await http.patch(f"/v1/contacts/{contact_id}", json=fields, headers=owner.headers)


async def subscribe(http: httpx.AsyncClient, owner: Account, url: str, **fields: Any) -> Any:
    body = {"url": url, "events": ["contact.created", "contact.updated"], **fields}
    response = await http.post("/v1/webhooks", json=body, headers=owner.headers)
    assert response.status_code == 201, response.text
    return response.json()


async def test_defaults_to_callable_and_is_set_on_create(
    http: httpx.AsyncClient, owner: Account
) -> None:
    plain = await create(http, owner)
    assert plain["do_not_call"] is False and plain["do_not_call_reason"] is None
    flagged = await create(http, owner, do_not_call=True, do_not_call_reason="  asked twice ")
    assert flagged["do_not_call"] is True
    assert flagged["do_not_call_reason"] == "asked twice"
    got = await http.get(f"/v1/contacts/{flagged['id']}", headers=owner.headers)
    assert got.json()["do_not_call"] is True


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"do_not_call": "yes"}, "do_not_call"),
        ({"do_not_call": 1}, "do_not_call"),
        ({"do_not_call": None}, "do_not_call"),
        ({"do_not_call": True, "do_not_call_reason": "r" * 201}, "do_not_call_reason"),
        ({"do_not_call": True, "do_not_call_reason": "bad\x00"}, "do_not_call_reason"),
        ({"do_not_call_reason": "a reason without the flag"}, "do_not_call_reason"),
    ],
)
async def test_create_refuses_bad_values_naming_the_field(
    http: httpx.AsyncClient, owner: Account, fields: dict[str, Any], field: str
) -> None:
    response = await http.post("/v1/contacts", json={**ADA, **fields}, headers=owner.headers)
    assert response.status_code == 422, response.text
    assert field in field_errors(response)


async def test_patch_sets_and_lifts_the_flag_with_previous_attributes(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        await subscribe(http, owner, receiver.url)
        contact = await create(http, owner)
        flagged = await patch(
            http, owner, contact["id"], do_not_call=True, do_not_call_reason="complaint"
        )
        assert flagged.status_code == 200, flagged.text
        assert flagged.json()["do_not_call"] is True
        # Lifting the flag drops its reason; a reason alone on a callable contact is refused.
        lifted = await patch(http, owner, contact["id"], do_not_call=False)
        assert lifted.json()["do_not_call_reason"] is None
        lone = await patch(http, owner, contact["id"], do_not_call_reason="why")
        assert lone.status_code == 422 and "do_not_call_reason" in field_errors(lone)
        null = await patch(http, owner, contact["id"], do_not_call=None)
        assert null.status_code == 422 and "do_not_call" in field_errors(null)
        created, set_, unset = await receiver.wait_for(3)
        assert created.json()["data"]["do_not_call"] is False
        assert set_.json()["data"]["do_not_call_reason"] == "complaint"
        assert set_.json()["previous_attributes"] == {
            "do_not_call": False,
            "do_not_call_reason": None,
        }
        assert unset.json()["previous_attributes"] == {
            "do_not_call": True,
            "do_not_call_reason": "complaint",
        }


async def test_list_filters_on_the_flag(http: httpx.AsyncClient, owner: Account) -> None:
    callable_ = await create(http, owner)
    flagged = await create(http, owner, do_not_call=True)

    async def listed(**params: str) -> Any:
        response = await http.get("/v1/contacts", params=params, headers=owner.headers)
        assert response.status_code == 200, response.text
        return response

    assert [c["id"] for c in (await listed(do_not_call="true")).json()] == [flagged["id"]]
    assert [c["id"] for c in (await listed(do_not_call="false")).json()] == [callable_["id"]]
    assert len((await listed()).json()) == 2
    assert (await listed()).json()[0]["do_not_call"] is True  # SQLite's own JSON: a boolean
    for bad in ("yes", "1", "TRUE", ""):
        response = await http.get(
            "/v1/contacts", params={"do_not_call": bad}, headers=owner.headers
        )
        assert response.status_code == 422, bad
        assert "do_not_call" in field_errors(response)


async def test_a_cel_filter_on_the_flag_decides_delivery(
    http: httpx.AsyncClient, owner: Account
) -> None:
    async with Receiver() as receiver:
        await subscribe(
            http, owner, receiver.url_for("/callable"), filter="!event.data.do_not_call"
        )
        await subscribe(http, owner, receiver.url_for("/all"))
        await create(http, owner, first_name="Blocked", do_not_call=True)
        fine = await create(http, owner, first_name="Fine")
        await receiver.wait_until(
            lambda rs: (
                [r.path for r in rs].count("/all") == 2 and "/callable" in {r.path for r in rs}
            )
        )
        [delivered] = [r for r in receiver.requests if r.path == "/callable"]
        assert delivered.json()["data"]["id"] == fine["id"]


async def test_a_call_for_a_do_not_call_contact_is_refused(
    http: httpx.AsyncClient, owner: Account
) -> None:
    flagged = await create(http, owner, do_not_call=True, phone_number="+14155550100")
    for body in (
        {
            "call_type": "outbound",
            "customer_phone_number": "+14155559999",
            "contact_id": flagged["id"],
        },
        # Linked by its phone number, without contact_id.
        {"call_type": "inbound", "customer_phone_number": "+1 415 555 0100"},
    ):
        response = await http.post("/v1/calls", json=body, headers=owner.headers)
        assert response.status_code == 409, response.text
        assert response.json()["error"]["code"] == "do_not_call"
    listed = await http.get("/v1/calls", headers=owner.headers)
    assert listed.json() == []
    lifted = await patch(http, owner, flagged["id"], do_not_call=False)
    assert lifted.status_code == 200
    again = await http.post(
        "/v1/calls",
        json={"call_type": "outbound", "customer_phone_number": "+14155550100"},
        headers=owner.headers,
    )
    assert again.status_code == 201
    assert again.json()["contact_id"] == flagged["id"]
