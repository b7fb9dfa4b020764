//! The kube-rs peer of the Nestor benchmark operator: the same reconcile of the same Widget
//! custom resource as the controller-runtime peer (bench/controller-runtime/main.go), driven
//! by the same line protocol on stdin/stdout (bench/operators/protocol.mjs). Built by
//! bench/lib/cargo-build.mjs into ~/.cache/nestor/bench.
//!
//!   bench-operator --kubeconfig FILE --namespace NS --mode sync|reconcile --workers 8
//!     [--sync-kind configmap|widget] [--owns configmap]
mod protocol;
mod widget;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::controller::{self, Controller};
use kube::runtime::{WatchStreamExt, predicates, reflector, watcher};
use kube::{Api, Client, Config, Resource};
use protocol::{Recorder, cpu_us, fail, memory, now_us, send};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Debug;
use std::io::BufRead;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use widget::{Context, Widget};

fn flags() -> HashMap<String, String> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut out = HashMap::new();
    let mut i = 0;
    while i < argv.len() {
        if let Some(name) = argv[i].strip_prefix('-') {
            let value = argv.get(i + 1).cloned().unwrap_or_default();
            out.insert(name.trim_start_matches('-').to_owned(), value);
            i += 1;
        }
        i += 1;
    }
    out
}

/// Reads commands on a thread of its own; stdin closing (the parent went away) ends the process.
fn commands() -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if let Ok(cmd) = serde_json::from_str::<Value>(&line) {
                if cmd["cmd"] == "exit" {
                    std::process::exit(0);
                }
                let _ = tx.send(cmd);
            }
        }
        std::process::exit(0);
    });
    rx
}

#[tokio::main]
async fn main() {
    let process_start = Instant::now();
    let flags = flags();
    let flag = |name: &str, default: &str| flags.get(name).cloned().unwrap_or_else(|| default.to_owned());
    let namespace = flag("namespace", "default");
    let workers: u16 = flag("workers", "8").parse().unwrap_or(8);
    let kubeconfig = Kubeconfig::read_from(flag("kubeconfig", "")).unwrap_or_else(|e| fail(e));
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| fail(e));
    let client = Client::try_from(config).unwrap_or_else(|e| fail(e));
    send(json!({"ev": "hello", "pid": std::process::id(), "runtime": "kube 5.0.0, k8s-openapi 0.29.0, tokio"}));
    let mut commands = commands();

    match flag("mode", "reconcile").as_str() {
        "sync" => {
            let kind = flag("sync-kind", "configmap");
            while let Some(cmd) = commands.recv().await {
                if cmd["cmd"] == "start" {
                    let synced = match kind.as_str() {
                        "widget" => sync::<Widget>(Api::namespaced(client.clone(), &namespace)).await,
                        _ => sync::<ConfigMap>(Api::namespaced(client.clone(), &namespace)).await,
                    };
                    send(synced);
                } else if cmd["cmd"] == "stats" {
                    let mut m = memory();
                    m.insert("ev".into(), json!("stats"));
                    m.insert("cpuUs".into(), json!(cpu_us()));
                    m.insert("at".into(), json!(now_us()));
                    send(Value::Object(m));
                }
            }
        }
        "reconcile" => {
            let widgets: Api<Widget> = Api::namespaced(client.clone(), &namespace);
            let (reader, writer) = reflector::store();
            // The generation predicate on the Widget stream (controller-runtime's
            // GenerationChangedPredicate); the cache drops managedFields, as the Go peer's transform.
            let stream = watcher(widgets, watcher::Config::default())
                .modify(|w| w.meta_mut().managed_fields = None)
                .default_backoff()
                .reflect(writer)
                .applied_objects()
                .predicate_filter(predicates::generation, Default::default());
            let mut controller = Controller::for_stream(stream, reader.clone())
                .with_config(controller::Config::default().concurrency(workers));
            if flag("owns", "") == "configmap" {
                // kube-rs watches the children's metadata only to map them to owners: no cache of them.
                let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
                controller = controller.owns(configmaps, watcher::Config::default());
            }
            let context = Arc::new(Context {
                client,
                recorder: Recorder::default(),
            });
            // Errors go to stderr, which the bench keeps for its failure messages.
            let running = controller
                .run(widget::reconcile, widget::error_policy, context.clone())
                .for_each(|result| {
                    if let Err(error) = result {
                        eprintln!("controller: {error}");
                    }
                    std::future::ready(())
                });
            tokio::spawn(running);
            wait_until_ready(&reader).await;
            send(json!({"ev": "ready", "at": now_us(), "startupMs": process_start.elapsed().as_secs_f64() * 1000.0}));
            while let Some(cmd) = commands.recv().await {
                context.recorder.command(&cmd);
            }
        }
        mode => fail(format!("unknown mode {mode:?}")),
    }
}

/// The store's readiness is a oneshot receiver that wakes only the last task to poll it, and
/// the controller's runner polls it too: so ask again every 5 ms rather than wait for a wake-up.
async fn wait_until_ready<K: Resource<DynamicType = ()> + Clone>(reader: &reflector::Store<K>) {
    loop {
        match tokio::time::timeout(Duration::from_millis(5), reader.wait_until_ready()).await {
            Ok(Ok(())) => return,
            Ok(Err(e)) => fail(e),
            Err(_) => {}
        }
    }
}

/// One reflector of `K`, started and waited for until its initial list is cached.
async fn sync<K>(api: Api<K>) -> Value
where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
{
    let before = memory();
    let cpu_before = cpu_us();
    let started = now_us();
    let (reader, writer) = reflector::store();
    let stream = watcher(api, watcher::Config::default())
        .modify(|o| o.meta_mut().managed_fields = None)
        .default_backoff()
        .reflect(writer);
    tokio::spawn(stream.for_each(|_| std::future::ready(())));
    reader.wait_until_ready().await.unwrap_or_else(|e| fail(e));
    let synced = now_us();
    let cpu_after = cpu_us();
    let after = memory();
    json!({"ev": "synced", "objects": reader.state().len(), "syncUs": synced - started,
        "cpuUs": cpu_after - cpu_before, "before": before, "after": after})
}
