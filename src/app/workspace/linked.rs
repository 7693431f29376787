//! Panes a paddock on another host opened here (`WindowAction::OpenThread`): each in a tab
//! of its own, sized by that paddock whatever the layout here, its secrets the ones that
//! paddock handed with it.

use super::{start_dir, Launch, Refusal, Workspace};
use crate::config::ThreadSpec;
use crate::mux::PaneId;
use crate::term::TermSize;
use crate::vault::handed::Handed;

impl Workspace {
    /// Open `spec` for a paddock on another host: in a tab of its own, sized `size` by that
    /// paddock whatever the layout here (`size_linked_pane` changes it), with the secrets it
    /// `handed`. The pane, and the secrets withheld from its program here, and why.
    pub fn open_linked_thread(
        &mut self,
        spec: &ThreadSpec,
        size: TermSize,
        handed: Option<Handed>,
        request: u32,
    ) -> (PaneId, Vec<(String, String)>) {
        let (_, pane) = self.mux.new_tab(spec.name.clone(), Some(spec.name.clone()));
        self.start_linked(pane, spec, size, handed);
        if let Some(entry) = self.panes.get_mut(&pane) {
            entry.opened_for = Some(request);
        }
        let withheld = self.panes.get(&pane).map(|p| p.withheld.clone()).unwrap_or_default();
        (pane, withheld)
    }

    /// Start (or start again) a linked thread in `pane`.
    pub(super) fn start_linked(
        &mut self,
        pane: PaneId,
        spec: &ThreadSpec,
        size: TermSize,
        handed: Option<Handed>,
    ) {
        let command = self.command_or_default(spec.command.clone());
        let launch = Launch { handed, ..Launch::thread(command, start_dir(spec), spec.clone()) };
        if let Err(Refusal(_, message)) = self.start(pane, launch, size) {
            self.insert_notice(pane, spec, &message, size);
        }
        if let Some(entry) = self.panes.get_mut(&pane) {
            entry.linked_size = Some(size);
        }
    }

    /// The pane a link's `OpenThread` with `request` opened, if it is still here.
    pub fn opened_for(&self, request: u32) -> Option<PaneId> {
        self.panes.iter().find(|(_, p)| p.opened_for == Some(request)).map(|(id, _)| *id)
    }

    /// Size a pane a paddock on another host opened, as its own pane there is.
    pub fn size_linked_pane(&mut self, pane: PaneId, size: TermSize) -> Result<(), String> {
        let entry = self.panes.get_mut(&pane).ok_or_else(|| format!("pane {} is gone", pane.0))?;
        if entry.linked_size.is_none() {
            return Err(format!("pane {} was not opened by a link; it is sized here", pane.0));
        }
        entry.linked_size = Some(size);
        if entry.size != size && entry.session.resize(size).is_ok() {
            entry.size = size;
        }
        Ok(())
    }
}
