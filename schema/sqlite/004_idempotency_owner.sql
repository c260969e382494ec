-- Version 4: the process holding a pending Idempotency-Key claim (docs/storage.md, "Idempotency
-- records"). A claim whose owner is no longer alive is taken over by the next retry at once,
-- instead of answering idempotency_in_progress until the pending bound. Rows written before have
-- no owner: a pending one of them counts as a dead process's claim.
ALTER TABLE idempotency_keys ADD COLUMN owner TEXT;
