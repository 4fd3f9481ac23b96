//! Meilisearch tasks: waiting for one within the task timeout (a failed
//! task is an error with Meilisearch's message), and deleting an index.

use std::time::Instant;

use meilisearch_sdk::client::Client;
use meilisearch_sdk::task_info::TaskInfo;
use meilisearch_sdk::tasks::Task;

use super::retry::call;
use super::{MeiliConfig, MeiliError};

/// Deletes `index` (one that is not there is fine).
pub(crate) async fn delete_index(
    client: &Client,
    config: &MeiliConfig,
    index: &str,
) -> Result<(), MeiliError> {
    let task = call(config, "delete index", || client.delete_index(index)).await?;
    match wait(client, config, task, "delete index").await {
        Ok(()) => Ok(()),
        // Deleting an index that is not there fails as a task; that is fine.
        Err(MeiliError::TaskFailed { message, .. }) if message.contains("not found") => Ok(()),
        Err(e) => Err(e),
    }
}

/// Waits for a task, with the task timeout; a failed task is an error
/// carrying Meilisearch's message.
pub(crate) async fn wait(
    client: &Client,
    config: &MeiliConfig,
    task: TaskInfo,
    what: &str,
) -> Result<(), MeiliError> {
    let uid = task.task_uid;
    let deadline = Instant::now() + config.task_timeout;
    loop {
        let status = call(config, "task status", || client.get_task(&task)).await;
        match status {
            Ok(Task::Succeeded { .. }) => return Ok(()),
            Ok(Task::Failed { content }) => {
                return Err(MeiliError::TaskFailed {
                    uid,
                    what: what.to_string(),
                    message: content.error.error_message,
                })
            }
            Ok(Task::Enqueued { .. } | Task::Processing { .. }) => {}
            // The SDK has no `canceled` status; it surfaces as an unreadable task.
            Err(MeiliError::Rejected { message, .. }) if message.contains("parsing response") => {
                return Err(MeiliError::TaskFailed {
                    uid,
                    what: what.to_string(),
                    message: format!(
                        "task ended in a state the client cannot read (canceled?): {message}"
                    ),
                })
            }
            Err(e) => return Err(e),
        }
        if Instant::now() >= deadline {
            return Err(MeiliError::TaskTimeout {
                uid,
                what: what.to_string(),
                seconds: config.task_timeout.as_secs(),
            });
        }
        tokio::time::sleep(config.poll_interval).await;
    }
}
