export { exportReceipt, publishReceipt, redactionPolicy, type ExportOptions, type ExportResult, type PublishOptions, type PublishResult } from "./export.ts";
export { verifyReceipt, DEFAULT_RECEIPT_LIMITS, type ReceiptVerdict, type SignatureState, type VerifyReceiptOptions, type ReceiptLimits } from "./verify.ts";
export { loadPublicKey, loadSigningKey, generateKeyPair, type GeneratedKeyPair } from "./keys.ts";
export { UNAUTHENTICATED_FIELDS, buildManifest, parseManifest, type Manifest } from "./manifest.ts";
