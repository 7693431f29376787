//! The `config` tab: while the configuration file has problems, a window shows them in a tab
//! of their own (the file's last good version stays in force).

use super::Workspace;

impl Workspace {
    /// Show the configuration's problems in the `config` tab (opened, or refreshed), or close
    /// the tab when there are none. Only where a window draws the panes (title strips): a
    /// server with none says so in `paddock ls`. The focus stays where it is.
    pub fn refresh_config_notice(&mut self) {
        if let Some(pane) = self.config_notice.take() {
            drop(self.take(pane));
        }
        let Some(problems) = self.config_problems.clone().filter(|_| self.header_rows > 0) else {
            return;
        };
        let text = format!(
            "paddock's configuration has problems. Until they are fixed paddock keeps the last \
             good configuration (or its defaults). Check with `paddock config check`.\n\n{problems}\n"
        );
        let focused = self.mux.focused_pane();
        let notice = self.open_notice("config", &text);
        self.focus(focused.unwrap_or(notice));
        self.config_notice = Some(notice);
    }
}
