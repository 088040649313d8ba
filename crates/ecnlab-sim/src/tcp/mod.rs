//! STUB: TCP transports (to be implemented).
