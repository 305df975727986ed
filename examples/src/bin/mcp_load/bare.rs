//! Server B: a bare rmcp server with one `#[tool]` method, `search_documents`, running the same
//! search over the same store as the example server's tool, with no checks around it.

use std::convert::Infallible;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::TokioIo;
use rmcp::handler::server::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
use tokio::net::TcpListener;
use tool_contract_examples::{search, DocumentStore, SearchDocumentsArgs, SearchResults};

/// The tenant whose documents the example server's local user searches.
const TENANT: &str = "acme";

#[derive(Clone)]
struct Bare {
    store: DocumentStore,
    /// Built once per server and shared by its sessions' clones: `#[tool_handler]`'s default
    /// (`Self::tool_router()`) would build the router again on every call.
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Bare {
    fn new(store: DocumentStore) -> Self {
        Bare {
            store,
            tool_router: Self::tool_router(),
        }
    }

    /// Finds evidence candidates in internal documents.
    #[tool(name = "search_documents")]
    fn search_documents(
        &self,
        Parameters(args): Parameters<SearchDocumentsArgs>,
    ) -> Json<SearchResults> {
        Json(search(&self.store, TENANT, &args))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bare {}

/// Serves B on `addr` (port 0 picks one), printing its URL first on stdout, until killed.
pub async fn serve(addr: &str) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    println!("http://{}/mcp", listener.local_addr()?);
    let bare = Bare::new(DocumentStore::seeded());
    // The same session manager and service as the example server; rmcp's defaults otherwise.
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(bare.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    ));
    loop {
        let (stream, _) = listener.accept().await?;
        let service = Arc::clone(&service);
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                let service = Arc::clone(&service);
                async move { Ok::<_, Infallible>(service.handle(req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), handler)
                .await;
        });
    }
}
