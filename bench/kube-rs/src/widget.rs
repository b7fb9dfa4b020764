//! The Widget custom resource (bench/lib/common.mjs) and its reconcile, the same as the Go
//! peer's: apply one owned ConfigMap child (server-side), then merge-patch the status.
use crate::protocol::{Recorder, now_us};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, CustomResource, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const WRITTEN_AT: &str = "bench.nestor.dev/written-at";
const FIELD_MANAGER: &str = "bench";

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "bench.nestor.dev",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    #[serde(default)]
    pub size: i64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub round: i64,
    /// Makes the sync scenario's Widgets ~1 KiB, as its ConfigMaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub phase: String,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

pub struct Context {
    pub client: Client,
    pub recorder: Recorder,
}

pub async fn reconcile(widget: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
    let started_at = now_us();
    let ns = widget.namespace().unwrap_or_default();
    let name = widget.name_any();
    let key = format!("{ns}/{name}");
    let written_at = widget.annotations().get(WRITTEN_AT).map(String::as_str);
    ctx.recorder.start(&key, written_at, started_at);
    let result = apply(&widget, &ns, &name, &ctx.client).await;
    ctx.recorder.finish(&key, result.is_ok());
    result.map(|()| Action::await_change())
}

async fn apply(widget: &Widget, ns: &str, name: &str, client: &Client) -> Result<(), kube::Error> {
    let child = ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{name}-child")),
            namespace: Some(ns.to_owned()),
            // controller_owner_ref leaves blockOwnerDeletion unset; the other peers set it.
            owner_references: widget.controller_owner_ref(&()).map(|mut owner| {
                owner.block_owner_deletion = Some(true);
                vec![owner]
            }),
            ..Default::default()
        },
        data: Some(BTreeMap::from([
            ("size".to_owned(), widget.spec.size.to_string()),
            ("round".to_owned(), widget.spec.round.to_string()),
        ])),
        ..Default::default()
    };
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    configmaps
        .patch(
            &format!("{name}-child"),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&child),
        )
        .await?;
    let status = serde_json::json!({
        "status": {"observedGeneration": widget.metadata.generation.unwrap_or(0), "phase": "Ready"}
    });
    let widgets: Api<Widget> = Api::namespaced(client.clone(), ns);
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.into()),
        ..Default::default()
    };
    widgets.patch_status(name, &params, &Patch::Merge(&status)).await?;
    Ok(())
}

/// A failed reconcile is retried after 50 ms (none fails in the scenarios; controller-runtime
/// starts at 5 ms and doubles).
pub fn error_policy(_widget: Arc<Widget>, _error: &kube::Error, _ctx: Arc<Context>) -> Action {
    Action::requeue(Duration::from_millis(50))
}
