//! The ledger's promises, each checked against both implementations: a
//! SQLite file two ledgers share (two replicas of one machine) and a
//! PostgreSQL database two ledgers share (two replicas of several
//! machines; a real server from `harmonia_testkit::postgres`).
//!
//! Each test is written once, over a pair of ledgers sharing one store;
//! `both!` makes it a test per backend.

use super::postgres::PostgresLedger;
use super::sqlite::SqliteLedger;
use super::*;
use crate::database::{Database, DatabaseSettings};
use harmonia_testkit::tempdir::TempDir;
use std::sync::Arc;

const BOUNDS: SessionBounds = SessionBounds { total: 4, per_credential: 2 };
const TTL: Duration = Duration::from_secs(60);
const LEASE: Duration = Duration::from_secs(60);

/// Two ledgers sharing one store, and what keeps the store alive.
struct Pair {
    a: Arc<dyn Ledger>,
    b: Arc<dyn Ledger>,
    _dir: TempDir,
}

fn sqlite_pair() -> Pair {
    let dir = TempDir::new("ledger");
    let path = dir.path().join("sessions.db");
    let a: Arc<dyn Ledger> = Arc::new(SqliteLedger::open(Some(&path)).unwrap());
    let b: Arc<dyn Ledger> = Arc::new(SqliteLedger::open(Some(&path)).unwrap());
    Pair { a, b, _dir: dir }
}

async fn postgres_pair() -> Pair {
    let server = harmonia_testkit::postgres::shared();
    let dir = TempDir::new("ledger");
    let url = server.url(&server.database("ledger"));
    let password = server.password_file(dir.path());
    let open = |replica: &str| {
        let settings = DatabaseSettings::new(&url, Some(&password), None, 4, Duration::from_secs(5)).unwrap();
        Database::new(settings, replica.to_owned()).unwrap()
    };
    let (a, b) = (open("a"), open("b"));
    assert_eq!(a.migrate().await.unwrap(), vec![1], "a new database is migrated from nothing");
    assert_eq!(b.migrate().await.unwrap(), Vec::<u32>::new(), "a second replica finds it current");
    Pair { a: Arc::new(PostgresLedger::new(a)), b: Arc::new(PostgresLedger::new(b)), _dir: dir }
}

/// `case` as two tests: on SQLite and on PostgreSQL.
macro_rules! both {
    ($case:ident) => {
        mod $case {
            use super::*;

            #[tokio::test]
            async fn on_sqlite() {
                super::$case(sqlite_pair()).await;
            }

            #[tokio::test]
            async fn on_postgres() {
                super::$case(postgres_pair().await).await;
            }
        }
    };
}

fn entries(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|text| (*text).to_owned()).collect()
}

/// Open a session of `credential` on skill `s`; its id.
async fn open(
    ledger: &dyn Ledger,
    credential: &str,
    first: &[&str],
    ttl: Duration,
    lease: Duration,
) -> Result<String, LedgerError> {
    let id = new_id()?;
    // Each an explicit new session: the holder's current one in turn.
    let session = NewSession {
        id: id.clone(),
        credential: credential.into(),
        holder: format!("holder of {credential}"),
        replace: true,
        skill: "s".into(),
        entries: entries(first),
        bounds: BOUNDS,
        ttl,
        lease,
    };
    ledger.create(session).await.map(|()| id)
}

fn claim(id: &str, credential: &str, skill: &str, step: u64) -> Claim {
    Claim {
        id: id.into(),
        credential: credential.into(),
        skill: skill.into(),
        step,
        lease: LEASE,
        with_trace: true,
    }
}

fn step(id: &str, at: u64, first: u64, texts: &[&str]) -> Step {
    Step { id: id.into(), step: at, first, entries: entries(texts), ttl: TTL }
}

fn place(credential: &str, lease: Duration) -> Place {
    Place { id: new_id().unwrap(), credential: credential.into(), bounds: BOUNDS, lease }
}

async fn a_session_moves_on_one_step_per_call_and_an_earlier_step_is_stale(pair: Pair) {
    let ledger = &*pair.a;
    let id = open(ledger, "c", &["1"], TTL, LEASE).await.unwrap();
    assert_eq!(
        ledger.claim(claim(&id, "c", "s", 0)).await,
        Err(LedgerError::Busy),
        "held for its first call"
    );
    ledger.commit(step(&id, 0, 1, &["2"])).await.unwrap();
    assert_eq!(ledger.claim(claim(&id, "c", "s", 0)).await, Err(LedgerError::Stale));
    assert_eq!(ledger.claim(claim(&id, "c", "s", 1)).await, Ok(Some("[1,2]".to_owned())));
    assert_eq!(ledger.claim(claim(&id, "c", "s", 1)).await, Err(LedgerError::Busy));
    ledger.release(id.clone(), 1).await.unwrap();
    let without_trace = Claim { with_trace: false, ..claim(&id, "c", "s", 1) };
    assert_eq!(ledger.claim(without_trace).await, Ok(None));
    // Entries from the wrong place are refused, and add nothing.
    assert_eq!(ledger.commit(step(&id, 1, 1, &["9"])).await, Err(LedgerError::Stale));
    ledger.commit(step(&id, 1, 2, &["3", "4"])).await.unwrap();
    assert_eq!(ledger.commit(step(&id, 1, 4, &["5"])).await, Err(LedgerError::Stale), "recorded once");
    assert_eq!(ledger.trace(id.clone(), "c".into(), "s".into()).await, Ok("[1,2,3,4]".to_owned()));
}
both!(a_session_moves_on_one_step_per_call_and_an_earlier_step_is_stale);

async fn a_session_is_only_its_credentials_and_skills(pair: Pair) {
    let ledger = &*pair.a;
    let id = open(ledger, "c", &["1"], TTL, LEASE).await.unwrap();
    ledger.release(id.clone(), 0).await.unwrap();
    assert_eq!(ledger.claim(claim(&id, "other", "s", 0)).await, Err(LedgerError::Unknown));
    assert_eq!(ledger.claim(claim(&id, "c", "other", 0)).await, Err(LedgerError::Unknown));
    assert_eq!(ledger.trace(id.clone(), "other".into(), "s".into()).await, Err(LedgerError::Unknown));
    assert_eq!(ledger.claim(claim("nope", "c", "s", 0)).await, Err(LedgerError::Unknown));
}
both!(a_session_is_only_its_credentials_and_skills);

async fn live_sessions_of_both_kinds_are_bounded_per_credential_and_over_the_ledger(pair: Pair) {
    let (a, b) = (&*pair.a, &*pair.b);
    open(a, "a", &["1"], TTL, Duration::ZERO).await.unwrap();
    b.reserve(place("a", LEASE)).await.unwrap();
    assert_eq!(open(a, "a", &["1"], TTL, LEASE).await, Err(LedgerError::CredentialFull), "one of each kind");
    assert_eq!(b.reserve(place("a", LEASE)).await, Err(LedgerError::CredentialFull));
    open(b, "b", &["1"], TTL, Duration::ZERO).await.unwrap();
    a.reserve(place("b", LEASE)).await.unwrap();
    assert_eq!(open(a, "c", &["1"], TTL, LEASE).await, Err(LedgerError::ServerFull));
    assert_eq!(b.reserve(place("c", LEASE)).await, Err(LedgerError::ServerFull));
    assert_eq!(a.live("a".into()).await, Ok(SessionBounds { total: 4, per_credential: 2 }));
    assert_eq!(b.live("c".into()).await, Ok(SessionBounds { total: 4, per_credential: 0 }));
}
both!(live_sessions_of_both_kinds_are_bounded_per_credential_and_over_the_ledger);

async fn expired_sessions_and_places_are_forgotten_and_a_given_back_place_frees_its_share(pair: Pair) {
    let ledger = &*pair.a;
    let id = open(ledger, "a", &["1"], Duration::ZERO, Duration::ZERO).await.unwrap();
    let gone = place("a", Duration::ZERO);
    ledger.reserve(gone.clone()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(ledger.live("a".into()).await, Ok(SessionBounds::NONE), "expired, not live");
    assert_eq!(ledger.claim(claim(&id, "a", "s", 0)).await, Err(LedgerError::Unknown));
    let kept = place("a", LEASE);
    ledger.reserve(kept.clone()).await.unwrap();
    open(ledger, "a", &["1"], TTL, LEASE).await.unwrap();
    assert_eq!(open(ledger, "a", &["1"], TTL, LEASE).await, Err(LedgerError::CredentialFull));
    ledger.give_back(kept.id.clone()).await.unwrap();
    open(ledger, "a", &["1"], TTL, LEASE).await.unwrap();
    assert_eq!(ledger.live("a".into()).await.unwrap().per_credential, 2);
}
both!(expired_sessions_and_places_are_forgotten_and_a_given_back_place_frees_its_share);

async fn renewing_keeps_a_place_and_writes_back_one_the_store_lost(pair: Pair) {
    let ledger = &*pair.a;
    let short = place("a", Duration::from_millis(300));
    ledger.reserve(short.clone()).await.unwrap();
    ledger.renew(vec![(short.id.clone(), "a".into())], LEASE).await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(ledger.live("a".into()).await.unwrap().per_credential, 1, "renewed past its first lease");
    // A place the store no longer has (a crash emptied an unlogged table)
    // is written again by its replica's renewal.
    let lost = new_id().unwrap();
    ledger.renew(vec![(lost, "b".into())], LEASE).await.unwrap();
    assert_eq!(ledger.live("b".into()).await.unwrap().per_credential, 1);
}
both!(renewing_keeps_a_place_and_writes_back_one_the_store_lost);

async fn two_replicas_sharing_the_store_cannot_both_move_a_session_on(pair: Pair) {
    let (a, b) = (&*pair.a, &*pair.b);
    let id = open(a, "c", &["1"], TTL, LEASE).await.unwrap();
    assert_eq!(b.claim(claim(&id, "c", "s", 0)).await, Err(LedgerError::Busy));
    a.commit(step(&id, 0, 1, &["2"])).await.unwrap();
    assert_eq!(b.claim(claim(&id, "c", "s", 1)).await, Ok(Some("[1,2]".to_owned())));
    assert_eq!(a.claim(claim(&id, "c", "s", 1)).await, Err(LedgerError::Busy));
    // Both replicas try to record the same step: exactly one does.
    let (first, second) = tokio::join!(b.commit(step(&id, 1, 2, &["3"])), a.commit(step(&id, 1, 2, &["x"])));
    assert!(
        matches!((&first, &second), (Ok(()), Err(LedgerError::Stale)) | (Err(LedgerError::Stale), Ok(()))),
        "{first:?} {second:?}"
    );
    let trace = a.trace(id.clone(), "c".into(), "s".into()).await.unwrap();
    assert!(trace == "[1,2,3]" || trace == "[1,2,x]", "{trace}");
}
both!(two_replicas_sharing_the_store_cannot_both_move_a_session_on);

async fn many_openings_at_once_on_two_replicas_never_pass_the_bounds(pair: Pair) {
    // 16 credentials open at once, half on each replica, alternating the
    // two kinds: exactly the server's bound (4) get in.
    let openings = (0..16).map(|n| {
        let ledger = if n % 2 == 0 { Arc::clone(&pair.a) } else { Arc::clone(&pair.b) };
        async move {
            let credential = format!("token:{n}");
            if n % 4 < 2 {
                open(&*ledger, &credential, &["1"], TTL, LEASE).await.is_ok()
            } else {
                ledger.reserve(place(&credential, LEASE)).await.is_ok()
            }
        }
    });
    let opened = futures_util::future::join_all(openings).await.into_iter().filter(|ok| *ok).count();
    assert_eq!(opened, 4);
    assert_eq!(pair.a.live("x".into()).await.unwrap().total, 4);
}
both!(many_openings_at_once_on_two_replicas_never_pass_the_bounds);

fn current(holder: &str, credential: &str) -> CurrentClaim {
    CurrentClaim { holder: holder.into(), credential: credential.into(), skill: "s".into(), lease: LEASE }
}

/// Open, without replacing, `holder`'s current session; its id.
async fn open_current(ledger: &dyn Ledger, holder: &str, credential: &str) -> Result<String, LedgerError> {
    let id = new_id()?;
    let session = NewSession {
        id: id.clone(),
        credential: credential.into(),
        holder: holder.into(),
        replace: false,
        skill: "s".into(),
        entries: entries(&["1"]),
        bounds: BOUNDS,
        ttl: TTL,
        lease: LEASE,
    };
    ledger.create(session).await.map(|()| id)
}

async fn a_call_without_a_handle_goes_on_with_the_current_session_and_only_new_replaces_it(pair: Pair) {
    let (a, b) = (&*pair.a, &*pair.b);
    assert_eq!(a.claim_current(current("h", "c")).await, Ok(None), "nothing to go on with");
    let first = open_current(a, "h", "c").await.unwrap();
    assert_eq!(b.claim_current(current("h", "c")).await, Err(LedgerError::Busy), "held by its first call");
    a.commit(step(&first, 0, 1, &["2"])).await.unwrap();
    let held = b.claim_current(current("h", "c")).await.unwrap().unwrap();
    assert_eq!(
        held,
        Current { id: first.clone(), step: 1, trace: "[1,2]".into() },
        "at its step, on any replica"
    );
    b.release(first.clone(), 1).await.unwrap();
    assert_eq!(
        open_current(b, "h", "c").await,
        Err(LedgerError::Busy),
        "one current session a holder and skill"
    );
    assert_eq!(a.claim_current(current("other holder", "c")).await, Ok(None), "another holder has none");
    assert_eq!(a.claim_current(current("h", "other")).await, Ok(None), "nor another credential");
    // An explicit new session replaces it; the old one goes on only by
    // its handle (its id and step).
    let second = open(a, "c", &["1"], TTL, LEASE).await.unwrap();
    let second_holder = format!("holder of {}", "c");
    a.commit(step(&second, 0, 1, &["x"])).await.unwrap();
    let held = a.claim_current(current(&second_holder, "c")).await.unwrap().unwrap();
    assert_eq!(held.id, second);
    assert_eq!(a.current_trace(second_holder, "c".into(), "s".into()).await.unwrap().unwrap().1, "[1,x]");
    assert_eq!(a.claim(claim(&first, "c", "s", 1)).await, Ok(Some("[1,2]".to_owned())));
    assert_eq!(
        a.current_trace("h".into(), "c".into(), "s".into()).await.unwrap().map(|(id, _)| id),
        Some(first)
    );
}
both!(a_call_without_a_handle_goes_on_with_the_current_session_and_only_new_replaces_it);

async fn two_calls_without_a_handle_racing_on_two_replicas_open_one_session(pair: Pair) {
    let (first, second) = tokio::join!(open_current(&*pair.a, "h", "c"), open_current(&*pair.b, "h", "c"));
    let opened = [&first, &second].iter().filter(|opened| opened.is_ok()).count();
    assert_eq!(opened, 1, "{first:?} {second:?}");
    assert!(matches!((&first, &second), (Err(LedgerError::Busy), _) | (_, Err(LedgerError::Busy))));
}
both!(two_calls_without_a_handle_racing_on_two_replicas_open_one_session);
