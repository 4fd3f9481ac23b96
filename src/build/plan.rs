//! Which skill files a build reads, and what it knows of them first: the
//! whole tree listed, walked and dated ([`list_tree`]), or, when this run
//! built the commit's first parent just before, that build's entries with
//! the files the commit changed patched in ([`patch_parent`]), which costs
//! what the commit changed instead of what the tree holds.

use std::collections::{BTreeMap, HashMap, HashSet};

use agentfinder_skills_reader::contract::parts::PartEntry;

use super::BuildError;
use crate::assemble::keys::entry_keys;
use crate::assemble::marketplace::{parse_marketplace, Marketplace};
use crate::config::Config;
use crate::reuse::{Base, BucketTree};
use crate::source::{Change, Entry, EntryKind, Snapshot};
use crate::validate::diagnostics::{Finding, WarningClass};
use crate::walk::supporting_files::{folder_files, folder_of, shipped_entries};
use crate::walk::{one_version_per_plugin, plugin_aliases, skill_entries, WalkRules};

/// What a build starts from.
pub(super) struct Plan {
    /// Skill files to key, then take from `base` or parse, in path order.
    pub files: Vec<Entry>,
    /// Entries of the parent's build that stand as they are, in path order.
    pub carried: Vec<PartEntry>,
    /// The commit that last changed each of `files`.
    pub changes: HashMap<String, Change>,
    /// The files of each of `files`' folders ([`crate::walk::supporting_files`]).
    pub folder_files: HashMap<String, Vec<String>>,
    /// The same files as entries of the tree, by skill file, for the risk
    /// rules to read and the entry keys to name by blob.
    pub shipped: HashMap<String, Vec<Entry>>,
    /// The marketplace file's contents, and why it was ignored, if it was.
    pub marketplace: (Marketplace, Vec<(String, Finding)>),
    /// Earlier entries to take by key (a listed plan only).
    pub base: Option<Base>,
    /// The names of the base's buckets and lists.
    pub base_buckets: Option<BucketTree>,
    /// One line on what was found.
    pub found: String,
}

/// Lists, walks and dates the whole tree; `base` offers the entries of an
/// earlier build and the changes known at its commit.
pub(super) fn list_tree(
    config: &Config,
    snapshot: &Snapshot,
    rules: &WalkRules,
    mut base: Option<Base>,
) -> Result<Plan, BuildError> {
    // The listing releases the pack pages it maps as it goes (see Snapshot::list).
    let entries = snapshot.list()?;
    let mut skills = skill_entries(&entries, rules);
    if config.walk.one_version_per_plugin {
        let reader = snapshot.reader();
        let aliases = plugin_aliases(&entries, |entry| {
            let bytes = reader.read(entry).ok()?;
            String::from_utf8(bytes).ok()
        });
        skills = one_version_per_plugin(skills, &aliases);
    }
    // Path order: the order of the composed files, whatever the source's.
    skills.sort_by(|a, b| a.path.cmp(&b.path));
    let found = format!(
        "found {} skill files in {} entries",
        skills.len(),
        entries.len()
    );
    let marketplace_entry = entries.iter().find(|e| e.path == config.walk.marketplace);
    let marketplace = read_marketplace(config, snapshot, marketplace_entry);
    let paths: Vec<&str> = skills.iter().map(|e| e.path.as_str()).collect();
    let known = base.as_ref().map(Base::known_changes);
    let changes = snapshot.last_changed(&paths, known, config.walk.history_depth)?;
    let folder_files = folder_files(&paths, entries.iter().map(|e| e.path.as_str()), rules);
    let shipped = shipped_entries(&folder_files, &entries);
    let files: Vec<Entry> = skills.into_iter().cloned().collect();
    Ok(Plan {
        files,
        carried: Vec::new(),
        changes,
        folder_files,
        shipped,
        marketplace,
        base_buckets: base.as_mut().map(Base::take_buckets),
        base,
        found,
    })
}

/// The plan of a commit whose first parent `base` was built by this run
/// with the same key maker: the base's entries for the files the commit
/// left alone (their inputs, dates included, are the same), the changed
/// skill files to parse, dated to this commit. A cold build of the commit
/// makes the same entries. `Ok(Err(base))` hands the base back where the
/// patch cannot be trusted: another parent, another key maker, plugin
/// versions or the marketplace file in play, symlinked or undated skills,
/// or a history walk whose bound moved with the commit (its dates differ).
pub(super) fn patch_parent(
    config: &Config,
    snapshot: &Snapshot,
    rules: &WalkRules,
    mut base: Base,
    vectors: bool,
) -> Result<Result<Plan, Base>, BuildError> {
    let Some(diff) = snapshot.parent_changes()? else {
        return Ok(Err(base));
    };
    let marketplace_path = config.walk.marketplace.as_str();
    let touches_marketplace = diff.files.iter().any(|f| f.path == marketplace_path);
    let every_entry_plain = || {
        base.entries()
            .iter()
            .all(|e| e.blob.is_some() && e.changed_at.is_some())
    };
    if diff.parent != base.commit()
        || config.walk.one_version_per_plugin
        || touches_marketplace
        || !every_entry_plain()
        || !snapshot.same_history_bound_as_parent(config.walk.history_depth)?
    {
        return Ok(Err(base));
    }
    let marketplace_entry = snapshot.find(marketplace_path)?;
    let marketplace = read_marketplace(config, snapshot, marketplace_entry.as_ref());
    let keys = entry_keys(config, &snapshot.version.branch, &marketplace.0, vectors);
    if base.fingerprint() != Some(keys.fingerprint()) {
        return Ok(Err(base));
    }
    let mut files = Vec::new();
    for change in diff.files.iter().filter(|f| !f.mode_only) {
        let Some(entry) = change.after.as_ref().filter(|e| rules.matches(&e.path)) else {
            continue;
        };
        if entry.kind == EntryKind::Symlink {
            return Ok(Err(base)); // resolving it needs the whole tree
        }
        files.push(entry.clone());
    }
    // Paths whose bytes changed (an executable bit alone leaves a file's
    // date as it was, as the history walk sees it).
    let mut touched: Vec<&str> = diff
        .files
        .iter()
        .filter(|f| !f.mode_only)
        .map(|f| f.path.as_str())
        .collect();
    touched.sort_unstable();
    // Every folder holding a changed path, mode or bytes: a skill there
    // ships other files now.
    let touched_folders: HashSet<&str> = diff
        .files
        .iter()
        .flat_map(|f| f.path.match_indices('/').map(|(at, _)| &f.path[..at]))
        .chain([""])
        .collect();
    let here = Change {
        commit: snapshot.version.id.clone(),
        time: snapshot.version.time,
        at_or_before: false,
    };
    let mut changes: HashMap<String, Change> = files
        .iter()
        .map(|e| (e.path.clone(), here.clone()))
        .collect();
    // A skill whose SKILL.md the commit left alone but whose folder it
    // touched is built again (it ships other files now), dated as it was.
    for entry in base.entries() {
        let untouched = touched.binary_search(&entry.path.as_str()).is_err();
        if !(untouched && touched_folders.contains(folder_of(&entry.path))) {
            continue;
        }
        let (Some(file), Some(time)) = (snapshot.find(&entry.path)?, entry.changed_at) else {
            return Ok(Err(base));
        };
        let change = Change {
            commit: entry.commit.clone(),
            time,
            at_or_before: entry.changed_at_or_before,
        };
        changes.insert(entry.path.clone(), change);
        files.push(file);
    }
    let base_buckets = Some(base.take_buckets());
    let carried: Vec<PartEntry> = base
        .into_entries()
        .into_iter()
        .filter(|e| {
            touched.binary_search(&e.path.as_str()).is_err() && !changes.contains_key(&e.path)
        })
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let (folder_files, shipped) = list_folders(snapshot, &files, rules)?;
    let found = format!(
        "found {} skill files: {} changed since {}, {} as they were",
        carried.len() + files.len(),
        files.len(),
        diff.parent,
        carried.len()
    );
    Ok(Ok(Plan {
        files,
        carried,
        changes,
        folder_files,
        shipped,
        marketplace,
        base: None,
        base_buckets,
        found,
    }))
}

/// The files of the folders of `files` (names, and entries), each folder
/// listed once.
#[allow(clippy::type_complexity)]
fn list_folders(
    snapshot: &Snapshot,
    files: &[Entry],
    rules: &WalkRules,
) -> Result<(HashMap<String, Vec<String>>, HashMap<String, Vec<Entry>>), BuildError> {
    let mut by_folder: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for file in files {
        by_folder
            .entry(folder_of(&file.path))
            .or_default()
            .push(&file.path);
    }
    let mut found = HashMap::new();
    let mut shipped = HashMap::new();
    for (folder, skills) in by_folder {
        let listing = snapshot.list_folder(folder)?;
        let names = folder_files(&skills, listing.iter().map(|e| e.path.as_str()), rules);
        shipped.extend(shipped_entries(&names, &listing));
        found.extend(names);
    }
    Ok((found, shipped))
}

/// The marketplace file of the snapshot, if it has one; an unreadable one
/// is a warning, never a failed build.
fn read_marketplace(
    config: &Config,
    snapshot: &Snapshot,
    entry: Option<&Entry>,
) -> (Marketplace, Vec<(String, Finding)>) {
    let Some(entry) = entry else {
        return (Marketplace::default(), Vec::new());
    };
    let path = &config.walk.marketplace;
    let result = snapshot
        .reader()
        .read(entry)
        .map_err(|e| (1, e.to_string()))
        .and_then(|bytes| parse_marketplace(&bytes));
    match result {
        Ok(marketplace) => (marketplace, Vec::new()),
        Err((line, message)) => (
            Marketplace::default(),
            vec![(
                path.clone(),
                Finding::at(
                    WarningClass::MarketplaceInvalid,
                    line,
                    format!("ignored: {message}"),
                ),
            )],
        ),
    }
}
