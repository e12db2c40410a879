//! Trace replay as a stream: a trace becomes a scenario after one pass that learns its
//! processes, memcgs and file sizes, and its records then flow from the reader into the
//! engine one at a time. A replay's memory is proportional to its distinct pages (the page
//! maps of sparse files), never to its request count.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};

use std::sync::{Arc, Mutex};

use crate::access::{PageRef, TraceRecord, Via};
use crate::consts::{MAX_LFS_PAGES, MAX_SIM_NS};
use crate::hash::{MixMap, MixSet};
use crate::machine::mm::vm;
use crate::machine::MachineConfig;
use crate::trace::{self, RecordReader, TraceError, TraceFormat, TraceHeader};

use super::{Action, FileSpec, ProcSpec, Scenario, Stream, ThreadSpec};

/// Files larger than this (64 GiB) are compacted when a trace is replayed.
pub const MAX_FILE_PAGES: u64 = 1 << 24;

/// Where a replay's records come from.
#[derive(Clone, Debug)]
pub enum ReplaySource {
    /// A trace file, read again from the start by every thread of the replay.
    File { path: PathBuf, format: TraceFormat },
    /// Records already in memory (already rebased).
    Memory(Arc<[TraceRecord]>),
}

impl ReplaySource {
    /// A fresh reader at the first record.
    fn open(&self) -> Result<Box<dyn RecordReader>, TraceError> {
        match self {
            ReplaySource::File { path, format } => {
                trace::open_records(path, format).map_err(|e| in_file(e, path))
            }
            ReplaySource::Memory(records) => Ok(Box::new(SharedRecords {
                records: Arc::clone(records),
                next: 0,
            })),
        }
    }

    /// Whether the pages are an object trace's (`obj_id << OBJECT_PAGE_SHIFT`, file 0).
    fn is_object_trace(&self) -> bool {
        matches!(
            self,
            ReplaySource::File {
                format: TraceFormat::OracleGeneral,
                ..
            }
        )
    }

    /// The last file page a record may use: a block device's page cache ends at
    /// `MAX_LFS_FILESIZE` (its `s_maxbytes`). Native traces are checked by their reader, and an
    /// object trace's pages are its own numbering (`obj_id << 20`, always renumbered).
    fn max_file_page(&self) -> u64 {
        match self {
            ReplaySource::File {
                format: TraceFormat::Vscsi | TraceFormat::Csv(_),
                ..
            } => MAX_LFS_PAGES - 1,
            _ => u64::MAX,
        }
    }

    /// Whether times are rebased so that the earliest record is at 0.
    fn rebases_time(&self) -> bool {
        match self {
            ReplaySource::File { format, .. } => format.rebases_time(),
            ReplaySource::Memory(_) => false,
        }
    }

    /// Errors of this source's reader, naming the file.
    fn locate(&self, e: TraceError) -> TraceError {
        match self {
            ReplaySource::File { path, .. } => in_file(e, path),
            ReplaySource::Memory(_) => e,
        }
    }
}

fn in_file(e: TraceError, path: &Path) -> TraceError {
    e.located(path)
}

/// In-memory records shared by the threads of a replay.
struct SharedRecords {
    records: Arc<[TraceRecord]>,
    next: usize,
}

impl RecordReader for SharedRecords {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        let r = self.records.get(self.next).copied();
        self.next += 1;
        Ok(r)
    }
}

/// How a sparse file's pages are renumbered for the replay; either way the order of pages
/// is kept, only empty space goes.
#[derive(Debug)]
pub enum PageRemap {
    /// Every page used, by rank among the pages used (found in a hash map).
    Ranked(MixMap<u64, u64>),
    /// An object trace whose object ids are dense: object `id`'s page `k` (page
    /// `id << OBJECT_PAGE_SHIFT | k`) becomes `id * pages_per_object + k`, arithmetic only.
    Objects { pages_per_object: u64, objects: u64 },
}

impl PageRemap {
    fn ranked(pages: MixSet<u64>) -> Self {
        let mut sorted: Vec<u64> = pages.into_iter().collect();
        sorted.sort_unstable();
        let mut rank = MixMap::default();
        rank.reserve(sorted.len());
        rank.extend(sorted.iter().enumerate().map(|(i, &p)| (p, i as u64)));
        PageRemap::Ranked(rank)
    }

    /// The pages of the renumbered file.
    fn len(&self) -> u64 {
        match self {
            PageRemap::Ranked(rank) => rank.len() as u64,
            PageRemap::Objects {
                pages_per_object,
                objects,
            } => pages_per_object * objects,
        }
    }

    #[inline]
    fn get(&self, page: u64) -> u64 {
        match self {
            PageRemap::Ranked(rank) => rank[&page],
            PageRemap::Objects {
                pages_per_object, ..
            } => (page >> OBJECT_PAGE_SHIFT) * pages_per_object + (page & OBJECT_PAGE_MASK),
        }
    }
}

const OBJECT_PAGE_SHIFT: u32 = trace::oracle::OBJECT_PAGE_SHIFT;
const OBJECT_PAGE_MASK: u64 = (1 << OBJECT_PAGE_SHIFT) - 1;

/// Object ids an object trace may use for [`PageRemap::Objects`] (a 2 MiB bitmap at most).
const MAX_DENSE_OBJECTS: u64 = 1 << 24;

/// Whether an object trace's ids are dense enough to number pages by object id: ids below
/// [`MAX_DENSE_OBJECTS`], and at most four ids per distinct object used (so the file's page
/// cache stays proportional to the objects used).
#[derive(Debug, Default)]
struct ObjectDensity {
    seen: Vec<u64>,
    distinct: u64,
    max_object: u64,
    max_offset: u64,
    sparse: bool,
}

impl ObjectDensity {
    /// Notes pages `page..page + n` of one object.
    #[inline]
    fn note(&mut self, page: u64, n: u64) {
        let object = page >> OBJECT_PAGE_SHIFT;
        let last = page.wrapping_add(n - 1);
        self.max_offset = self.max_offset.max(last & OBJECT_PAGE_MASK);
        if self.sparse || object >= MAX_DENSE_OBJECTS {
            self.sparse = true;
            return;
        }
        self.max_object = self.max_object.max(object);
        let (word, bit) = ((object / 64) as usize, object % 64);
        if word >= self.seen.len() {
            self.seen.resize((word + 1).next_power_of_two(), 0);
        }
        if self.seen[word] & (1 << bit) == 0 {
            self.seen[word] |= 1 << bit;
            self.distinct += 1;
        }
    }

    /// The remap, if the ids are dense.
    fn remap(&self) -> Option<PageRemap> {
        let objects = self.max_object + 1;
        (!self.sparse && objects <= 4 * self.distinct).then_some(PageRemap::Objects {
            pages_per_object: self.max_offset + 1,
            objects,
        })
    }
}

/// What the first pass learns about one pid.
#[derive(Debug)]
struct ProcPlan {
    pid: u32,
    /// The memcg of the pid's first record.
    memcg: u16,
    anon_pages: u64,
    /// Files the pid reaches through a mapping, in order of first use.
    mmaps: Vec<u32>,
    records: u64,
}

/// Everything the first pass over a trace learns.
#[derive(Debug, Default)]
struct TracePlan {
    header: TraceHeader,
    time_base: u64,
    /// Pids in order of first appearance; `pid_index` finds them.
    procs: Vec<ProcPlan>,
    pid_index: MixMap<u32, usize>,
    /// 1 + the largest page used, per file id.
    used_pages: BTreeMap<u32, u64>,
    /// Memcg indexes in order of first use.
    memcgs_used: Vec<u16>,
    remaps: BTreeMap<u32, PageRemap>,
}

/// The distinct pages of the files a pass collects.
type PageSets = BTreeMap<u32, MixSet<u64>>;

impl TracePlan {
    /// One pass over `source`. Block and object traces (file 0 only) collect file 0's
    /// distinct pages on the way, as such files are usually sparse; any other file found to
    /// need compaction costs one more pass.
    /// `declared`: the trace's declarations when they come with in-memory records (a
    /// reader's own otherwise).
    fn learn(
        source: &ReplaySource,
        declared: Option<&TraceHeader>,
    ) -> Result<TracePlan, TraceError> {
        let mut plan = TracePlan::default();
        let mut reader = source.open()?;
        let mut time_base = u64::MAX;
        let mut objects = source.is_object_trace().then(ObjectDensity::default);
        let mut index = 0u64;
        let mut latest = (0u64, 0u64);
        let max_file_page = source.max_file_page();
        while let Some((r, n)) = reader.next_run().map_err(|e| source.locate(e))? {
            index += 1;
            time_base = time_base.min(r.time_ns);
            if r.time_ns > latest.0 {
                latest = (r.time_ns, index);
            }
            plan.note(&r, n, max_file_page)
                .map_err(|problem| source.locate(TraceError::record(index, problem)))?;
            if let (Some(o), PageRef::File { page, .. }) = (&mut objects, r.page) {
                o.note(page, n);
            }
        }
        let header = declared.cloned().unwrap_or_else(|| reader.header());
        plan.header = header.completed_with_sizes(&plan.used_pages);
        plan.time_base = if source.rebases_time() && time_base != u64::MAX {
            time_base
        } else {
            0
        };
        if latest.0 - plan.time_base > MAX_SIM_NS {
            let problem = format!(
                "time {} ns lies {} ns after the trace's start, beyond the model's clock \
                 ({MAX_SIM_NS} ns, 146 years)",
                latest.0,
                latest.0 - plan.time_base
            );
            return Err(source.locate(TraceError::record(latest.1, problem)));
        }
        let mut huge = plan.huge_files();
        // A block trace's file spans the device's byte range: compact it too when it is
        // mostly holes (more than four pages of file per page record), so the page cache
        // follows the pages used, not the device size.
        let block = trace::block::BLOCK_TRACE_FILE;
        let records: u64 = plan.procs.iter().map(|p| p.records).sum();
        let block_pages = plan.used_pages.get(&block).copied().unwrap_or(0);
        if source.rebases_time() && block_pages > 4 * records && !huge.contains(&block) {
            huge.push(block);
        }
        if let Some(remap) = objects.and_then(|o| o.remap()) {
            huge.retain(|&f| f != trace::block::BLOCK_TRACE_FILE);
            plan.remaps.insert(trace::block::BLOCK_TRACE_FILE, remap);
        }
        let mut sets = PageSets::new();
        if !huge.is_empty() {
            collect_pages(source, &huge, &mut sets)?;
        }
        plan.remaps.extend(
            sets.into_iter()
                .map(|(file, pages)| (file, PageRemap::ranked(pages))),
        );
        Ok(plan)
    }

    /// Takes a record and the `n - 1` records of the next pages of its request into account;
    /// refuses a file page beyond `max_file_page`.
    fn note(&mut self, r: &TraceRecord, n: u64, max_file_page: u64) -> Result<(), String> {
        if let PageRef::File { page, .. } = r.page {
            let last = page.saturating_add(n - 1);
            if last > max_file_page {
                return Err(format!(
                    "file page {last} lies beyond MAX_LFS_FILESIZE (page {max_file_page})"
                ));
            }
        }
        if !self.memcgs_used.contains(&r.memcg) {
            self.memcgs_used.push(r.memcg);
        }
        let next = self.procs.len();
        let i = *self.pid_index.entry(r.pid).or_insert(next);
        if i == next {
            self.procs.push(ProcPlan {
                pid: r.pid,
                memcg: r.memcg,
                anon_pages: 0,
                mmaps: Vec::new(),
                records: 0,
            });
        }
        let proc = &mut self.procs[i];
        proc.records += n;
        match r.page {
            PageRef::Anon { page } => proc.anon_pages = proc.anon_pages.max(page.saturating_add(n)),
            PageRef::File { file, page } => {
                if r.via == Via::Mmap && !proc.mmaps.contains(&file) {
                    proc.mmaps.push(file);
                }
                let used = self.used_pages.entry(file).or_insert(0);
                *used = (*used).max(page.saturating_add(n));
            }
        }
        Ok(())
    }

    /// Declared size or 1 + the largest page used, whichever is larger.
    fn file_size(&self, id: u32, declared: u64) -> u64 {
        declared.max(self.used_pages.get(&id).copied().unwrap_or(0))
    }

    /// Files whose size is above [`MAX_FILE_PAGES`].
    fn huge_files(&self) -> Vec<u32> {
        self.header
            .files
            .iter()
            .filter(|(id, size, _)| self.file_size(*id, *size) > MAX_FILE_PAGES)
            .map(|(id, _, _)| *id)
            .collect()
    }

    /// The size a file gets in the replay: its renumbered size if it is compacted.
    fn file_pages(&self, id: u32, declared: u64) -> u64 {
        self.remaps
            .get(&id)
            .map_or(self.file_size(id, declared), PageRemap::len)
    }
}

/// One more pass, collecting the distinct pages of `files`.
fn collect_pages(
    source: &ReplaySource,
    files: &[u32],
    sets: &mut PageSets,
) -> Result<(), TraceError> {
    for &f in files {
        sets.insert(f, MixSet::default());
    }
    // A set holds a page in 8 bytes at a load of at least 7/16 after growing (hashbrown), and
    // the ranked map built from it 16 bytes at the same load.
    const BYTES_PER_PAGE: u64 = 8 * 16 / 7 + 16 * 16 / 7;
    let budget = crate::host::usable_bytes().unwrap_or(u64::MAX);
    let mut reader = source.open()?;
    let mut distinct = 0u64;
    while let Some((r, n)) = reader.next_run().map_err(|e| source.locate(e))? {
        if let PageRef::File { file, page } = r.page {
            if let Some(set) = sets.get_mut(&file) {
                distinct += (0..n)
                    .map(|k| u64::from(set.insert(page.wrapping_add(k))))
                    .sum::<u64>();
                if distinct * BYTES_PER_PAGE > budget {
                    return Err(source.locate(TraceError::Spec(format!(
                        "more than {distinct} distinct pages in sparse files: renumbering them \
                         needs more than the {} of memory this process may still use",
                        crate::host::mib(budget)
                    ))));
                }
            }
        }
    }
    Ok(())
}

impl TraceHeader {
    /// [`TraceHeader::completed`] from the largest page used per file instead of the records.
    fn completed_with_sizes(mut self, used: &BTreeMap<u32, u64>) -> TraceHeader {
        if !self.memcgs.iter().any(|(index, _)| *index == 0) {
            self.memcgs.insert(0, (0, "/".to_owned()));
        }
        let declared: MixSet<u32> = self.files.iter().map(|(id, _, _)| *id).collect();
        let implicit = used
            .iter()
            .filter(|(id, _)| !declared.contains(id))
            .map(|(&id, &size)| (id, size, None));
        self.files.extend(implicit);
        self
    }
}

/// How a trace's file ids become the scenario's file indexes: as they are when they are
/// dense, else by rank, so that the scenario's files follow the ids used, not their values.
#[derive(Debug)]
enum FileIds {
    Raw,
    Ranked(MixMap<u32, u32>),
}

impl FileIds {
    /// Ids are kept when the largest is below twice their number (plus a little).
    fn of(ids: &[u32]) -> Self {
        let max = ids.iter().copied().max().map_or(0, u64::from);
        if max < 2 * ids.len() as u64 + 64 {
            return FileIds::Raw;
        }
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        FileIds::Ranked(sorted.iter().zip(0..).map(|(&id, i)| (id, i)).collect())
    }

    #[inline]
    fn index(&self, id: u32) -> u32 {
        match self {
            FileIds::Raw => id,
            FileIds::Ranked(rank) => rank[&id],
        }
    }
}

/// The shared state of a replay's threads.
#[derive(Debug)]
pub struct Replay {
    source: ReplaySource,
    time_base: u64,
    remaps: BTreeMap<u32, PageRemap>,
    file_ids: FileIds,
    /// Pids in order of first appearance (a thread's `slot` indexes it).
    pid_slots: MixMap<u32, u32>,
}

/// One thread's part of a replay: the records of one pid.
#[derive(Clone, Debug)]
pub struct ReplayStream {
    replay: Arc<Replay>,
    pid: u32,
    /// The pid's rank among the replay's pids.
    slot: u32,
    /// The pid's records, for progress.
    pub records: u64,
}

impl ReplayStream {
    /// Which replay this is, to count the readers of a run (one per replay).
    pub fn replay_id(&self) -> usize {
        Arc::as_ptr(&self.replay) as usize
    }
}

impl PartialEq for ReplayStream {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.replay, &other.replay) && self.pid == other.pid
    }
}

/// The readers of one run's replays. A replay of one pid reads its trace on its own; the
/// threads of a replay of several pids share one reader, which hands each pid's records to
/// its thread and keeps those read ahead of their thread: the trace is read once per run,
/// not once per thread.
#[derive(Default)]
pub struct ReplayShare {
    demuxes: Vec<(Arc<Replay>, Arc<Mutex<Demux>>)>,
}

impl ReplayShare {
    fn demux(&mut self, replay: &Arc<Replay>) -> Arc<Mutex<Demux>> {
        if let Some((_, d)) = self.demuxes.iter().find(|(r, _)| Arc::ptr_eq(r, replay)) {
            return Arc::clone(d);
        }
        let d = Arc::new(Mutex::new(Demux::open(replay)));
        self.demuxes.push((Arc::clone(replay), Arc::clone(&d)));
        d
    }
}

/// One reader of a replay of several pids, and the records read ahead, per pid.
struct Demux {
    reader: Option<Box<dyn RecordReader>>,
    queues: Vec<VecDeque<TraceRecord>>,
    buffered: u64,
    /// Records that may wait in the queues (from the host's memory).
    max_buffered: u64,
    error: Option<String>,
}

impl Demux {
    fn open(replay: &Replay) -> Demux {
        let (reader, error) = match replay.source.open() {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let record = std::mem::size_of::<TraceRecord>() as u64;
        Demux {
            reader,
            queues: (0..replay.pid_slots.len())
                .map(|_| VecDeque::new())
                .collect(),
            buffered: 0,
            max_buffered: crate::host::available_bytes().map_or(u64::MAX, |b| b / 4 / record),
            error,
        }
    }

    /// The next record of the pid in `slot`, reading ahead as far as needed.
    fn next_for(&mut self, replay: &Replay, slot: u32) -> Result<Option<TraceRecord>, String> {
        if let Some(r) = self.queues[slot as usize].pop_front() {
            self.buffered -= 1;
            return Ok(Some(r));
        }
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        while let Some(reader) = self.reader.as_mut() {
            match reader.next_record() {
                Ok(Some(r)) => {
                    let s = replay.pid_slots[&r.pid];
                    if s == slot {
                        return Ok(Some(r));
                    }
                    self.queues[s as usize].push_back(r);
                    self.buffered += 1;
                    if self.buffered > self.max_buffered {
                        self.fail(format!(
                            "pid {} is more than {} records behind the others; sort the \
                             trace by time",
                            r.pid, self.max_buffered
                        ));
                    }
                }
                Ok(None) => self.reader = None,
                Err(e) => self.fail(replay.source.locate(e).to_string()),
            }
            if let Some(e) = &self.error {
                return Err(e.clone());
            }
        }
        Ok(None)
    }

    fn fail(&mut self, error: String) {
        self.error = Some(error);
        self.reader = None;
    }
}

/// Where a thread's records come from.
enum Feed {
    Own(Box<dyn RecordReader>),
    Shared(Arc<Mutex<Demux>>),
    Done,
}

impl ReplayStream {
    /// The actions of this pid: a `WaitUntil` before every record with a time, then its
    /// access. `share` holds the run's shared readers.
    pub fn iter(&self, share: &mut ReplayShare) -> ReplayIter {
        let mut error = None;
        let feed = if self.replay.pid_slots.len() > 1 {
            Feed::Shared(share.demux(&self.replay))
        } else {
            match self.replay.source.open() {
                Ok(r) => Feed::Own(r),
                Err(e) => {
                    error = Some(e.to_string());
                    Feed::Done
                }
            }
        };
        ReplayIter {
            replay: Arc::clone(&self.replay),
            feed,
            pid: self.pid,
            slot: self.slot,
            pending: None,
            error,
        }
    }
}

/// A thread's replay in progress.
pub struct ReplayIter {
    replay: Arc<Replay>,
    feed: Feed,
    pid: u32,
    slot: u32,
    pending: Option<Action>,
    /// Why the replay stopped early (a read error after the first pass succeeded).
    pub error: Option<String>,
}

impl ReplayIter {
    pub fn next_action(&mut self) -> Option<Action> {
        if let Some(a) = self.pending.take() {
            return Some(a);
        }
        let r = self.next_own_record()?;
        let page = match r.page {
            PageRef::File { file, page } => PageRef::File {
                file: self.replay.file_ids.index(file),
                page: self.replay.remaps.get(&file).map_or(page, |m| m.get(page)),
            },
            anon => anon,
        };
        let access = Action::Access {
            page,
            op: r.op,
            via: r.via,
            req: r.req,
        };
        let time = r.time_ns - self.replay.time_base;
        if time > 0 {
            self.pending = Some(access);
            return Some(Action::WaitUntil(time));
        }
        Some(access)
    }

    /// The next record of this thread's pid.
    fn next_own_record(&mut self) -> Option<TraceRecord> {
        let next = match &mut self.feed {
            Feed::Done => return None,
            Feed::Shared(d) => d
                .lock()
                .expect("replay reader poisoned")
                .next_for(&self.replay, self.slot),
            Feed::Own(reader) => loop {
                match reader.next_record() {
                    Ok(Some(r)) if r.pid == self.pid => break Ok(Some(r)),
                    Ok(Some(_)) => continue,
                    Ok(None) => break Ok(None),
                    Err(e) => break Err(self.replay.source.locate(e).to_string()),
                }
            },
        };
        match next {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                self.feed = Feed::Done;
                None
            }
            Err(e) => {
                self.error = Some(e);
                self.feed = Feed::Done;
                None
            }
        }
    }
}

impl Scenario {
    /// Builds a scenario that streams a trace file: one process per pid (in the memcg of its
    /// first record), one thread per process, every record replayed in order at its time (or
    /// back to back when times are 0). `machine` decides memory, swap and devices; the
    /// trace's memcgs are added. The file is read once here and once per thread in the run.
    pub fn from_trace_file(
        name: &str,
        machine: MachineConfig,
        path: &Path,
        format: &TraceFormat,
    ) -> Result<Scenario, String> {
        let source = ReplaySource::File {
            path: path.to_owned(),
            format: *format,
        };
        let plan = TracePlan::learn(&source, None).map_err(|e| e.to_string())?;
        replay_scenario(name, machine, plan, source)
    }

    /// Builds a scenario from a trace already in memory (see [`Scenario::from_trace_file`]);
    /// `header` holds the trace's declarations.
    pub fn from_trace(
        name: &str,
        machine: MachineConfig,
        header: &TraceHeader,
        records: &[TraceRecord],
    ) -> Result<Scenario, String> {
        let source = ReplaySource::Memory(records.into());
        let plan = TracePlan::learn(&source, Some(header)).map_err(|e| e.to_string())?;
        replay_scenario(name, machine, plan, source)
    }
}

/// The scenario of a learned trace.
fn replay_scenario(
    name: &str,
    mut machine: MachineConfig,
    plan: TracePlan,
    source: ReplaySource,
) -> Result<Scenario, String> {
    let mut memcg_paths = vec!["/".to_string()];
    for (idx, path) in &plan.header.memcgs {
        let i = *idx as usize;
        if memcg_paths.len() <= i {
            memcg_paths.resize(i + 1, String::new());
        }
        memcg_paths[i] = path.clone();
        if path != "/" && !machine.memcgs.iter().any(|m| &m.path == path) {
            machine.memcgs.push(crate::machine::MemcgConfig::new(path));
        }
    }
    let memcg_path = |index: u16| {
        memcg_paths
            .get(index as usize)
            .filter(|p| !p.is_empty())
            .cloned()
            .ok_or_else(|| format!("trace uses undeclared memcg {index}"))
    };
    for &index in &plan.memcgs_used {
        memcg_path(index)?;
    }
    let ids: Vec<u32> = plan.header.files.iter().map(|(id, _, _)| *id).collect();
    let file_ids = FileIds::of(&ids);
    let mut files: Vec<FileSpec> = Vec::new();
    for (id, declared, _) in &plan.header.files {
        let i = file_ids.index(*id) as usize;
        if files.len() <= i {
            files.resize(i + 1, FileSpec::new("", 0));
        }
        files[i].name = format!("file{id}");
        files[i].pages = files[i].pages.max(plan.file_pages(*id, *declared));
        files[i].tmpfs = plan.header.tmpfs.contains(id);
    }
    let procs: Vec<ProcSpec> = plan
        .procs
        .iter()
        .map(|p| {
            Ok(ProcSpec {
                name: format!("pid{}", p.pid),
                memcg: memcg_path(p.memcg)?,
                anon_pages: p.anon_pages,
                mmaps: p
                    .mmaps
                    .iter()
                    .map(|&f| (file_ids.index(f) as usize, vm::SHARED))
                    .collect(),
                fadvise_random: Vec::new(),
            })
        })
        .collect::<Result<_, String>>()?;
    let pid_slots = plan
        .procs
        .iter()
        .zip(0..)
        .map(|(p, s)| (p.pid, s))
        .collect();
    let replay = Arc::new(Replay {
        source,
        time_base: plan.time_base,
        remaps: plan.remaps,
        file_ids,
        pid_slots,
    });
    let cpus = machine.cpus;
    let threads = plan
        .procs
        .iter()
        .enumerate()
        .map(|(i, p)| ThreadSpec {
            proc: i,
            cpu: i as u32 % cpus,
            stream: Stream::Replay(ReplayStream {
                replay: Arc::clone(&replay),
                pid: p.pid,
                slot: i as u32,
                records: p.records,
            }),
        })
        .collect();
    Ok(Scenario {
        name: name.to_string(),
        description: "trace replay".into(),
        machine,
        files,
        procs,
        threads,
    })
}
