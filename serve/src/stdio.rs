//! The local server: MCP over stdin/stdout for an agent host that starts
//! `harmonia serve --stdio` as a child process. The principal (workspace
//! and allow-list) and an optional skill come from the command line; logs
//! go to stderr, never to stdout. End of input ends the server.

use crate::auth::Principal;
use crate::handler::McpServer;
use crate::state::ServeState;
use harmonia_host::liaison::skills::Skill;
use rmcp::ServiceExt;
use std::sync::Arc;

/// Serve one connection on stdin/stdout until the client leaves. An
/// empty allow-list in `principal` offers every tool loaded at the time
/// of each request, so a reload's new tools are offered too.
pub async fn serve(state: Arc<ServeState>, principal: Principal, skill: Option<Skill>) -> anyhow::Result<()> {
    let server = McpServer::new(state, skill, Some(principal));
    // Pipes (as agent hosts start a stdio server) are read and written
    // on the runtime's reactor, not through a blocking thread per read
    // and per write; anything else (a terminal, a file) as before.
    let running = server.serve(rmcp::transport::stdio_pipes()).await?;
    running.waiting().await?;
    Ok(())
}
