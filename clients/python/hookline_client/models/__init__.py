"""Contains all the data models used in inputs/outputs"""

from .account_out import AccountOut
from .account_update import AccountUpdate
from .analysis_schema_in import AnalysisSchemaIn
from .analysis_schema_out import AnalysisSchemaOut
from .analysis_schema_out_schema_type_0 import AnalysisSchemaOutSchemaType0
from .appointment_booked_event import AppointmentBookedEvent
from .attempt_out import AttemptOut
from .bulk_error import BulkError
from .bulk_error_details_type_0 import BulkErrorDetailsType0
from .bulk_result import BulkResult
from .bulk_result_status import BulkResultStatus
from .call_analysis import CallAnalysis
from .call_analysis_lead_qualification_type_0 import CallAnalysisLeadQualificationType0
from .call_analysis_out import CallAnalysisOut
from .call_analysis_out_lead_qualification_type_0 import (
    CallAnalysisOutLeadQualificationType0,
)
from .call_analysis_out_outcome_type_0 import CallAnalysisOutOutcomeType0
from .call_analysis_outcome_type_0 import CallAnalysisOutcomeType0
from .call_analyzed_event import CallAnalyzedEvent
from .call_complete import CallComplete
from .call_complete_call_status import CallCompleteCallStatus
from .call_completed_event import CallCompletedEvent
from .call_create import CallCreate
from .call_create_call_type import CallCreateCallType
from .call_create_metadata_type_0 import CallCreateMetadataType0
from .call_out import CallOut
from .call_out_call_status import CallOutCallStatus
from .call_out_call_type import CallOutCallType
from .call_out_metadata_type_0 import CallOutMetadataType0
from .call_started_event import CallStartedEvent
from .check_out import CheckOut
from .check_out_name import CheckOutName
from .conformance_out import ConformanceOut
from .contact_create import ContactCreate
from .contact_created_event import ContactCreatedEvent
from .contact_deleted_event import ContactDeletedEvent
from .contact_erased_data import ContactErasedData
from .contact_erased_event import ContactErasedEvent
from .contact_out import ContactOut
from .contact_update import ContactUpdate
from .contact_updated_event import ContactUpdatedEvent
from .contact_updated_event_previous_attributes import (
    ContactUpdatedEventPreviousAttributes,
)
from .contacts_bulk import ContactsBulk
from .contacts_bulk_contacts_item import ContactsBulkContactsItem
from .contacts_bulk_match_on import ContactsBulkMatchOn
from .contacts_bulk_out import ContactsBulkOut
from .delivery_detail_out import DeliveryDetailOut
from .delivery_detail_out_status import DeliveryDetailOutStatus
from .delivery_exhausted_event import DeliveryExhaustedEvent
from .delivery_out import DeliveryOut
from .delivery_out_status import DeliveryOutStatus
from .disabled_webhook import DisabledWebhook
from .disabled_webhook_headers import DisabledWebhookHeaders
from .disabled_webhook_payload import DisabledWebhookPayload
from .disabled_webhook_signing import DisabledWebhookSigning
from .erasure_accepted import ErasureAccepted
from .erasure_counts import ErasureCounts
from .erasure_notice import ErasureNotice
from .erasure_notice_status import ErasureNoticeStatus
from .erasure_out import ErasureOut
from .erasure_out_status import ErasureOutStatus
from .erasure_out_step import ErasureOutStep
from .error_detail import ErrorDetail
from .error_detail_details_type_0 import ErrorDetailDetailsType0
from .error_out import ErrorOut
from .event_out import EventOut
from .event_out_data import EventOutData
from .event_out_previous_attributes_type_0 import EventOutPreviousAttributesType0
from .event_type_doc import EventTypeDoc
from .event_type_doc_schema import EventTypeDocSchema
from .event_type_doc_thin_schema import EventTypeDocThinSchema
from .latency_out import LatencyOut
from .lead_qualified_event import LeadQualifiedEvent
from .list_calls_call_status_type_0 import ListCallsCallStatusType0
from .list_calls_call_type_type_0 import ListCallsCallTypeType0
from .list_contacts_do_not_call_type_0 import ListContactsDoNotCallType0
from .list_deliveries_status_type_0 import ListDeliveriesStatusType0
from .list_events_type import ListEventsType
from .mutual_tls import MutualTLS
from .mutual_tls_out import MutualTLSOut
from .o_auth_2_client_credentials import OAuth2ClientCredentials
from .o_auth_2_client_credentials_out import OAuth2ClientCredentialsOut
from .outcome import Outcome
from .recover_count_out import RecoverCountOut
from .recover_in import RecoverIn
from .recover_in_event_types_type_0_item import RecoverInEventTypesType0Item
from .recover_in_statuses_item import RecoverInStatusesItem
from .recover_out import RecoverOut
from .send_test_event_test_event_request import SendTestEventTestEventRequest
from .send_test_event_test_event_request_event_type import (
    SendTestEventTestEventRequestEventType,
)
from .stats_out import StatsOut
from .stats_out_status_codes import StatsOutStatusCodes
from .success_out import SuccessOut
from .test_event_out import TestEventOut
from .thin_data import ThinData
from .thin_event import ThinEvent
from .webhook_conformance_data import WebhookConformanceData
from .webhook_conformance_data_probe import WebhookConformanceDataProbe
from .webhook_conformance_event import WebhookConformanceEvent
from .webhook_create import WebhookCreate
from .webhook_create_events_item import WebhookCreateEventsItem
from .webhook_create_headers_type_0 import WebhookCreateHeadersType0
from .webhook_create_payload import WebhookCreatePayload
from .webhook_create_signing import WebhookCreateSigning
from .webhook_disabled_event import WebhookDisabledEvent
from .webhook_out import WebhookOut
from .webhook_out_headers import WebhookOutHeaders
from .webhook_out_payload import WebhookOutPayload
from .webhook_out_signing import WebhookOutSigning
from .webhook_secret_out import WebhookSecretOut
from .webhook_test_data import WebhookTestData
from .webhook_test_event import WebhookTestEvent
from .webhook_update import WebhookUpdate
from .webhook_update_events_item import WebhookUpdateEventsItem
from .webhook_update_headers import WebhookUpdateHeaders
from .webhook_update_payload import WebhookUpdatePayload
from .webhook_update_signing import WebhookUpdateSigning

__all__ = (
    "AccountOut",
    "AccountUpdate",
    "AnalysisSchemaIn",
    "AnalysisSchemaOut",
    "AnalysisSchemaOutSchemaType0",
    "AppointmentBookedEvent",
    "AttemptOut",
    "BulkError",
    "BulkErrorDetailsType0",
    "BulkResult",
    "BulkResultStatus",
    "CallAnalysis",
    "CallAnalysisLeadQualificationType0",
    "CallAnalysisOut",
    "CallAnalysisOutLeadQualificationType0",
    "CallAnalysisOutOutcomeType0",
    "CallAnalysisOutcomeType0",
    "CallAnalyzedEvent",
    "CallComplete",
    "CallCompleteCallStatus",
    "CallCompletedEvent",
    "CallCreate",
    "CallCreateCallType",
    "CallCreateMetadataType0",
    "CallOut",
    "CallOutCallStatus",
    "CallOutCallType",
    "CallOutMetadataType0",
    "CallStartedEvent",
    "CheckOut",
    "CheckOutName",
    "ConformanceOut",
    "ContactCreate",
    "ContactCreatedEvent",
    "ContactDeletedEvent",
    "ContactErasedData",
    "ContactErasedEvent",
    "ContactOut",
    "ContactUpdate",
    "ContactUpdatedEvent",
    "ContactUpdatedEventPreviousAttributes",
    "ContactsBulk",
    "ContactsBulkContactsItem",
    "ContactsBulkMatchOn",
    "ContactsBulkOut",
    "DeliveryDetailOut",
    "DeliveryDetailOutStatus",
    "DeliveryExhaustedEvent",
    "DeliveryOut",
    "DeliveryOutStatus",
    "DisabledWebhook",
    "DisabledWebhookHeaders",
    "DisabledWebhookPayload",
    "DisabledWebhookSigning",
    "ErasureAccepted",
    "ErasureCounts",
    "ErasureNotice",
    "ErasureNoticeStatus",
    "ErasureOut",
    "ErasureOutStatus",
    "ErasureOutStep",
    "ErrorDetail",
    "ErrorDetailDetailsType0",
    "ErrorOut",
    "EventOut",
    "EventOutData",
    "EventOutPreviousAttributesType0",
    "EventTypeDoc",
    "EventTypeDocSchema",
    "EventTypeDocThinSchema",
    "LatencyOut",
    "LeadQualifiedEvent",
    "ListCallsCallStatusType0",
    "ListCallsCallTypeType0",
    "ListContactsDoNotCallType0",
    "ListDeliveriesStatusType0",
    "ListEventsType",
    "MutualTLS",
    "MutualTLSOut",
    "OAuth2ClientCredentials",
    "OAuth2ClientCredentialsOut",
    "Outcome",
    "RecoverCountOut",
    "RecoverIn",
    "RecoverInEventTypesType0Item",
    "RecoverInStatusesItem",
    "RecoverOut",
    "SendTestEventTestEventRequest",
    "SendTestEventTestEventRequestEventType",
    "StatsOut",
    "StatsOutStatusCodes",
    "SuccessOut",
    "TestEventOut",
    "ThinData",
    "ThinEvent",
    "WebhookConformanceData",
    "WebhookConformanceDataProbe",
    "WebhookConformanceEvent",
    "WebhookCreate",
    "WebhookCreateEventsItem",
    "WebhookCreateHeadersType0",
    "WebhookCreatePayload",
    "WebhookCreateSigning",
    "WebhookDisabledEvent",
    "WebhookOut",
    "WebhookOutHeaders",
    "WebhookOutPayload",
    "WebhookOutSigning",
    "WebhookSecretOut",
    "WebhookTestData",
    "WebhookTestEvent",
    "WebhookUpdate",
    "WebhookUpdateEventsItem",
    "WebhookUpdateHeaders",
    "WebhookUpdatePayload",
    "WebhookUpdateSigning",
)
