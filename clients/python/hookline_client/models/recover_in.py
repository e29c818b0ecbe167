from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.recover_in_event_types_type_0_item import RecoverInEventTypesType0Item
from ..models.recover_in_statuses_item import RecoverInStatusesItem
from ..types import UNSET, Unset

T = TypeVar("T", bound="RecoverIn")


@_attrs_define
class RecoverIn:
    """
    Attributes:
        since (datetime.datetime): Start of the window (event time), within retention.
        backfill (bool | Unset): Let the window reach before the webhook was created: a new webhook gets the history of
            the types it subscribes to (with `missed`). Default: False.
        dry_run (bool | Unset): Count only: answer 200 `{"would_queue": N}` and queue nothing. Default: False.
        event_types (list[RecoverInEventTypesType0Item] | None | Unset): Only events of these types (default: every
            type).
        object_id (None | str | Unset): Only events about this contact or call (a call's events also count for its
            contact).
        statuses (list[RecoverInStatusesItem] | Unset): Which deliveries to send again: `failed`, `cancelled`,
            `succeeded` (a replay of what was delivered), and `missed` (events of a subscribed type the webhook never got).
            Default: failed, cancelled, missed.
        until (datetime.datetime | None | Unset): End of the window; default now.
    """

    since: datetime.datetime
    backfill: bool | Unset = False
    dry_run: bool | Unset = False
    event_types: list[RecoverInEventTypesType0Item] | None | Unset = UNSET
    object_id: None | str | Unset = UNSET
    statuses: list[RecoverInStatusesItem] | Unset = UNSET
    until: datetime.datetime | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        since = self.since.isoformat()

        backfill = self.backfill

        dry_run = self.dry_run

        event_types: list[str] | None | Unset
        if isinstance(self.event_types, Unset):
            event_types = UNSET
        elif isinstance(self.event_types, list):
            event_types = []
            for event_types_type_0_item_data in self.event_types:
                event_types_type_0_item = event_types_type_0_item_data.value
                event_types.append(event_types_type_0_item)

        else:
            event_types = self.event_types

        object_id: None | str | Unset
        if isinstance(self.object_id, Unset):
            object_id = UNSET
        else:
            object_id = self.object_id

        statuses: list[str] | Unset = UNSET
        if not isinstance(self.statuses, Unset):
            statuses = []
            for statuses_item_data in self.statuses:
                statuses_item = statuses_item_data.value
                statuses.append(statuses_item)

        until: None | str | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        elif isinstance(self.until, datetime.datetime):
            until = self.until.isoformat()
        else:
            until = self.until

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "since": since,
            }
        )
        if backfill is not UNSET:
            field_dict["backfill"] = backfill
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if event_types is not UNSET:
            field_dict["event_types"] = event_types
        if object_id is not UNSET:
            field_dict["object_id"] = object_id
        if statuses is not UNSET:
            field_dict["statuses"] = statuses
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        since = datetime.datetime.fromisoformat(d.pop("since"))

        backfill = d.pop("backfill", UNSET)

        dry_run = d.pop("dry_run", UNSET)

        def _parse_event_types(
            data: object,
        ) -> list[RecoverInEventTypesType0Item] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                event_types_type_0 = []
                _event_types_type_0 = data
                for event_types_type_0_item_data in _event_types_type_0:
                    event_types_type_0_item = RecoverInEventTypesType0Item(
                        event_types_type_0_item_data
                    )

                    event_types_type_0.append(event_types_type_0_item)

                return event_types_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[RecoverInEventTypesType0Item] | None | Unset, data)

        event_types = _parse_event_types(d.pop("event_types", UNSET))

        def _parse_object_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        object_id = _parse_object_id(d.pop("object_id", UNSET))

        _statuses = d.pop("statuses", UNSET)
        statuses: list[RecoverInStatusesItem] | Unset = UNSET
        if _statuses is not UNSET:
            statuses = []
            for statuses_item_data in _statuses:
                statuses_item = RecoverInStatusesItem(statuses_item_data)

                statuses.append(statuses_item)

        def _parse_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                until_type_0 = datetime.datetime.fromisoformat(data)

                return until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        until = _parse_until(d.pop("until", UNSET))

        recover_in = cls(
            since=since,
            backfill=backfill,
            dry_run=dry_run,
            event_types=event_types,
            object_id=object_id,
            statuses=statuses,
            until=until,
        )

        return recover_in
