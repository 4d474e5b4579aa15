//! The benchmark client of scripts/bench-mcp-hosted.py: one rmcp client, pointed either at a
//! server directly or at calyx's `/mcp-hosted`, so both sides of each comparison run the same
//! client code. Prints one JSON object with its measurements on stdout. Not a calyx feature.
//!
//! usage: mcp_bench_client MODE [--prefix P] [options] (--url URL [--token T] [--surface S] |
//!        --stdio COMMAND [ARGS...])
//!
//! Modes (tool names take the prefix, `fx-` through calyx, empty directly):
//! - `latency --calls N --size B`: N sequential `echo` calls with a B-byte message; p50/p99 ms.
//! - `throughput --clients C --calls N`: C clients, each its own session, N calls each; calls/s.
//! - `big --mib M --runs R`: R calls of `big {mib: M}`; each call's ms and the bytes received.
//! - `listchanged --changes N`: N times `add_tool`, then wait for `tools/list_changed`; the ms
//!   from sending the call to the notification, p50/p99.
//! - `connect`: ms from spawn (or first request) to `initialize` done and to `tools/list`
//!   answered, and the tool count.

mod connect;

use std::time::{Duration, Instant};

use connect::{connect, Bench, Client, Target};
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Parsed command line.
struct Options {
    mode: String,
    prefix: String,
    target: Target,
    calls: usize,
    size: usize,
    clients: usize,
    mib: u64,
    runs: usize,
    changes: usize,
}

fn parse() -> anyhow::Result<Options> {
    let mut args = std::env::args().skip(1);
    let mode = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: see the file's doc"))?;
    let mut o = Options {
        mode,
        prefix: String::new(),
        target: Target::Stdio(Vec::new()),
        calls: 2000,
        size: 1024,
        clients: 8,
        mib: 1,
        runs: 3,
        changes: 100,
    };
    let (mut url, mut token, mut surface) = (None, None, None);
    let number = |v: Option<String>| -> anyhow::Result<u64> {
        Ok(v.ok_or_else(|| anyhow::anyhow!("a flag needs a value"))?
            .parse()?)
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--prefix" => o.prefix = args.next().unwrap_or_default(),
            "--url" => url = args.next(),
            "--token" => token = args.next(),
            "--surface" => surface = args.next(),
            "--calls" => o.calls = number(args.next())? as usize,
            "--size" => o.size = number(args.next())? as usize,
            "--clients" => o.clients = number(args.next())? as usize,
            "--mib" => o.mib = number(args.next())?,
            "--runs" => o.runs = number(args.next())? as usize,
            "--changes" => o.changes = number(args.next())? as usize,
            "--stdio" => o.target = Target::Stdio(args.by_ref().collect()),
            other => anyhow::bail!("unknown argument {other:?}"),
        }
    }
    if let Some(url) = url {
        o.target = Target::Http {
            url,
            token,
            surface,
        };
    }
    Ok(o)
}

fn handler() -> (Bench, mpsc::UnboundedReceiver<Instant>) {
    let (list_changed, heard) = mpsc::unbounded_channel();
    (Bench { list_changed }, heard)
}

async fn call(
    client: &Client,
    name: &str,
    args: Value,
) -> anyhow::Result<rmcp::model::CallToolResult> {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = args.as_object().cloned();
    let result = client.peer().call_tool(params).await?;
    anyhow::ensure!(result.is_error != Some(true), "{name} failed: {result:?}");
    Ok(result)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 * q) as usize).min(sorted.len().saturating_sub(1));
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn summary(mut times: Vec<f64>) -> Value {
    times.sort_by(f64::total_cmp);
    json!({
        "n": times.len(),
        "p50_ms": quantile(&times, 0.5),
        "p99_ms": quantile(&times, 0.99),
        "mean_ms": times.iter().sum::<f64>() / times.len().max(1) as f64,
    })
}

async fn latency(o: &Options) -> anyhow::Result<Value> {
    let client = connect(&o.target, handler().0).await?;
    let message = "x".repeat(o.size);
    let name = format!("{}echo", o.prefix);
    let mut times = Vec::with_capacity(o.calls);
    for _ in 0..o.calls {
        let t = Instant::now();
        call(&client, &name, json!({"message": message})).await?;
        times.push(ms(t.elapsed()));
    }
    let _ = client.cancel().await;
    Ok(summary(times))
}

async fn throughput(o: &Options) -> anyhow::Result<Value> {
    let mut clients = Vec::new();
    for _ in 0..o.clients {
        clients.push(connect(&o.target, handler().0).await?);
    }
    let message = "x".repeat(o.size);
    let name = format!("{}echo", o.prefix);
    let start = Instant::now();
    let mut runs = tokio::task::JoinSet::new();
    for client in clients {
        let (name, message, calls) = (name.clone(), message.clone(), o.calls);
        runs.spawn(async move {
            for _ in 0..calls {
                call(&client, &name, json!({"message": message})).await?;
            }
            let _ = client.cancel().await;
            anyhow::Ok(())
        });
    }
    while let Some(done) = runs.join_next().await {
        done??;
    }
    let seconds = start.elapsed().as_secs_f64();
    let total = o.clients * o.calls;
    Ok(json!({"calls": total, "seconds": seconds, "calls_per_s": total as f64 / seconds}))
}

async fn big(o: &Options) -> anyhow::Result<Value> {
    let client = connect(&o.target, handler().0).await?;
    let name = format!("{}big", o.prefix);
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..o.runs {
        let t = Instant::now();
        let result = call(&client, &name, json!({"mib": o.mib})).await?;
        times.push(ms(t.elapsed()));
        bytes = serde_json::to_value(&result)?["content"][0]["text"]
            .as_str()
            .map_or(0, str::len);
    }
    anyhow::ensure!(bytes as u64 == o.mib << 20, "received {bytes} bytes");
    let _ = client.cancel().await;
    Ok(json!({"bytes": bytes, "times_ms": times, "summary": summary(times.clone())}))
}

async fn list_changed(o: &Options) -> anyhow::Result<Value> {
    let (bench, mut heard) = handler();
    let client = connect(&o.target, bench).await?;
    let name = format!("{}add_tool", o.prefix);
    let mut times = Vec::with_capacity(o.changes);
    for _ in 0..o.changes {
        while heard.try_recv().is_ok() {}
        let t = Instant::now();
        call(&client, &name, json!({})).await?;
        let at = tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await?
            .ok_or_else(|| anyhow::anyhow!("the client ended"))?;
        times.push(ms(at.duration_since(t)));
    }
    let _ = client.cancel().await;
    Ok(summary(times))
}

async fn connect_time(o: &Options) -> anyhow::Result<Value> {
    let t = Instant::now();
    let client = connect(&o.target, handler().0).await?;
    let initialized = t.elapsed();
    let tools = client.peer().list_all_tools().await?;
    let listed = t.elapsed();
    let _ = client.cancel().await;
    Ok(json!({"initialize_ms": ms(initialized), "tools_list_ms": ms(listed), "tools": tools.len()}))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let o = parse()?;
    let result = match o.mode.as_str() {
        "latency" => latency(&o).await?,
        "throughput" => throughput(&o).await?,
        "big" => big(&o).await?,
        "listchanged" => list_changed(&o).await?,
        "connect" => connect_time(&o).await?,
        other => anyhow::bail!("unknown mode {other:?}"),
    };
    println!("{result}");
    Ok(())
}
