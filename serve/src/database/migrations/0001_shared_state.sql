-- What replicas on several machines share. Times are the database's
-- clock, so replicas' clocks never disagree about an expiry.

-- Stateless guarded sessions (MCP 2026-07-28): one small row each. A call
-- holds one by moving `held_until`; its step moves only with its entries,
-- in one durable commit.
CREATE TABLE guarded_sessions (
    id text PRIMARY KEY,
    credential text NOT NULL,
    -- What its handles are bound to: the credential and its workspace.
    holder text NOT NULL,
    skill text NOT NULL,
    -- The session a call without a handle continues: one per holder and skill.
    current boolean NOT NULL,
    step bigint NOT NULL,
    entries bigint NOT NULL,
    expires timestamptz NOT NULL,
    held_until timestamptz NOT NULL
);
CREATE INDEX guarded_sessions_by_credential ON guarded_sessions (credential);
CREATE INDEX guarded_sessions_by_expiry ON guarded_sessions (expires);
CREATE UNIQUE INDEX guarded_sessions_current ON guarded_sessions (holder, skill) WHERE current;

-- Each session's trace entries, each written once.
CREATE TABLE guarded_entries (
    session text NOT NULL REFERENCES guarded_sessions (id) ON DELETE CASCADE,
    position bigint NOT NULL,
    entry text NOT NULL,
    PRIMARY KEY (session, position)
);

-- The MCP sessions open on every replica, each a lease its replica
-- renews (and writes again after a crash emptied this table).
CREATE UNLOGGED TABLE mcp_places (
    id text PRIMARY KEY,
    credential text NOT NULL,
    expires timestamptz NOT NULL
);
CREATE INDEX mcp_places_by_credential ON mcp_places (credential);

-- Every credential's token buckets, shared by the replicas: unlogged (no
-- write waits on the disk; a crash refills them).
CREATE UNLOGGED TABLE rate_buckets (
    credential text NOT NULL,
    scope text NOT NULL,
    tokens double precision NOT NULL,
    updated timestamptz NOT NULL,
    PRIMARY KEY (credential, scope)
);

-- Each replica's last heartbeat.
CREATE UNLOGGED TABLE replicas (
    id text PRIMARY KEY,
    seen timestamptz NOT NULL
);

-- One call of a credential through its buckets, in one round trip: the
-- credential's bucket (scope 'credential') and, when p_tool is given, the
-- tool's (scope 'tool <name>'). Both are refilled; a token is taken from
-- both, or from neither. Returns 0 when the call may run, else the
-- seconds until it may.
CREATE FUNCTION harmonia_admit(
    p_credential text,
    p_rate double precision,
    p_burst double precision,
    p_tool text,
    p_tool_rate double precision,
    p_tool_burst double precision
) RETURNS double precision
LANGUAGE plpgsql AS $$
DECLARE
    at timestamptz := clock_timestamp();
    have double precision;
    wait double precision := 0;
BEGIN
    INSERT INTO rate_buckets AS bucket (credential, scope, tokens, updated)
    VALUES (p_credential, 'credential', p_burst, at)
    ON CONFLICT (credential, scope) DO UPDATE SET
        tokens = least(p_burst, bucket.tokens
            + greatest(0, extract(epoch FROM at - bucket.updated)::double precision) * p_rate),
        updated = greatest(bucket.updated, at)
    RETURNING tokens INTO have;
    IF have < 1 THEN
        wait := (1 - have) / p_rate;
    END IF;
    IF p_tool IS NOT NULL THEN
        INSERT INTO rate_buckets AS bucket (credential, scope, tokens, updated)
        VALUES (p_credential, 'tool ' || p_tool, p_tool_burst, at)
        ON CONFLICT (credential, scope) DO UPDATE SET
            tokens = least(p_tool_burst, bucket.tokens
                + greatest(0, extract(epoch FROM at - bucket.updated)::double precision) * p_tool_rate),
            updated = greatest(bucket.updated, at)
        RETURNING tokens INTO have;
        IF have < 1 THEN
            wait := greatest(wait, (1 - have) / p_tool_rate);
        END IF;
    END IF;
    IF wait > 0 THEN
        RETURN wait;
    END IF;
    UPDATE rate_buckets SET tokens = tokens - 1
    WHERE credential = p_credential AND (scope = 'credential' OR scope = 'tool ' || p_tool);
    RETURN 0;
END
$$;
