from enum import StrEnum


class RecoverInEventTypesType0Item(StrEnum):
    APPOINTMENT_BOOKED = "appointment.booked"
    CALL_ANALYZED = "call.analyzed"
    CALL_COMPLETED = "call.completed"
    CALL_STARTED = "call.started"
    CONTACT_CREATED = "contact.created"
    CONTACT_DELETED = "contact.deleted"
    CONTACT_ERASED = "contact.erased"
    CONTACT_UPDATED = "contact.updated"
    DELIVERY_EXHAUSTED = "delivery.exhausted"
    LEAD_QUALIFIED = "lead.qualified"
    WEBHOOK_DISABLED = "webhook.disabled"

    def __str__(self) -> str:
        return str(self.value)
