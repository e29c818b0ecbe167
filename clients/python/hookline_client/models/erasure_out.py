from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.erasure_out_status import ErasureOutStatus
from ..models.erasure_out_step import ErasureOutStep

if TYPE_CHECKING:
    from ..models.erasure_counts import ErasureCounts
    from ..models.erasure_notice import ErasureNotice


T = TypeVar("T", bound="ErasureOut")


@_attrs_define
class ErasureOut:
    """
    Attributes:
        contact_id (str):
        counts (ErasureCounts):
        created_at (str):
        finished_at (None | str):
        id (str):
        status (ErasureOutStatus):
        step (ErasureOutStep): What the job is removing now.
        webhooks (list[ErasureNotice]): The webhooks told (once `done`), and what each acknowledged.
    """

    contact_id: str
    counts: ErasureCounts
    created_at: str
    finished_at: None | str
    id: str
    status: ErasureOutStatus
    step: ErasureOutStep
    webhooks: list[ErasureNotice]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        contact_id = self.contact_id

        counts = self.counts.to_dict()

        created_at = self.created_at

        finished_at: None | str
        finished_at = self.finished_at

        id = self.id

        status = self.status.value

        step = self.step.value

        webhooks = []
        for webhooks_item_data in self.webhooks:
            webhooks_item = webhooks_item_data.to_dict()
            webhooks.append(webhooks_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "contact_id": contact_id,
                "counts": counts,
                "created_at": created_at,
                "finished_at": finished_at,
                "id": id,
                "status": status,
                "step": step,
                "webhooks": webhooks,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.erasure_counts import ErasureCounts
        from ..models.erasure_notice import ErasureNotice

        d = dict(src_dict)
        contact_id = d.pop("contact_id")

        counts = ErasureCounts.from_dict(d.pop("counts"))

        created_at = d.pop("created_at")

        def _parse_finished_at(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))

        id = d.pop("id")

        status = ErasureOutStatus(d.pop("status"))

        step = ErasureOutStep(d.pop("step"))

        webhooks = []
        _webhooks = d.pop("webhooks")
        for webhooks_item_data in _webhooks:
            webhooks_item = ErasureNotice.from_dict(webhooks_item_data)

            webhooks.append(webhooks_item)

        erasure_out = cls(
            contact_id=contact_id,
            counts=counts,
            created_at=created_at,
            finished_at=finished_at,
            id=id,
            status=status,
            step=step,
            webhooks=webhooks,
        )

        erasure_out.additional_properties = d
        return erasure_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
