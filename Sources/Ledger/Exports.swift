// The read protocol and its value types live in LedgerQueries so the dashboard can use them without
// the decoders and crypto; everyone who works with a ledger needs them, so Ledger re-exports them.
@_exported import LedgerQueries
