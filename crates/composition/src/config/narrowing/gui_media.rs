//! The merge of `client_surface`, `[plan]`, `[computer_use]` and `[media.<kind>]` (rules in
//! [`super::RULES`]; why, in [`crate::config::gui_media`]).

use super::{Merge, Rule, render};
use crate::config::gui_media::{
    ComputerUseTable, GuiSettings, MediaEndpointTable, MediaSettings, MediaTable, PlanTable,
};
use kun_gui::ComputerUseMode;
use kun_gui::computer::DEFAULT_ACTIONS_PER_TURN;
use kun_ports::ClientSurface;

/// One layer's GUI and media keys.
pub(in crate::config) struct GuiMediaLayer {
    pub client_surface: Option<ClientSurface>,
    pub plan: Option<PlanTable>,
    pub computer_use: Option<ComputerUseTable>,
    pub media: Option<MediaTable>,
}

/// Later values win field by field.
fn overlay(into: &mut MediaEndpointTable, from: &MediaEndpointTable) {
    let MediaEndpointTable {
        base_url,
        model,
        api_key_env,
        voice,
        timeout_seconds,
        max_bytes,
    } = from;
    if base_url.is_some() {
        into.base_url.clone_from(base_url);
    }
    if model.is_some() {
        into.model.clone_from(model);
    }
    if api_key_env.is_some() {
        into.api_key_env.clone_from(api_key_env);
    }
    if voice.is_some() {
        into.voice.clone_from(voice);
    }
    if timeout_seconds.is_some() {
        into.timeout_seconds = *timeout_seconds;
    }
    if max_bytes.is_some() {
        into.max_bytes = *max_bytes;
    }
}

impl Merge<'_> {
    /// Merges one layer's GUI and media keys.
    pub(in crate::config) fn gui_media(
        &mut self,
        layer: GuiMediaLayer,
        gui: &mut GuiSettings,
        media: &mut MediaSettings,
    ) {
        let mut surface = Some(gui.client_surface);
        self.presentation("client_surface", &mut surface, layer.client_surface);
        gui.client_surface = surface.unwrap_or(ClientSurface::Cli);

        let PlanTable { dir } = layer.plan.unwrap_or_default();
        self.user_only("plan.dir", dir, |dir| gui.plan_dir = dir);

        let ComputerUseTable {
            mode,
            max_actions_per_turn,
        } = layer.computer_use.unwrap_or_default();
        if let Some(mode) = mode {
            let key = "computer_use.mode";
            Self::expect(key, Rule::OnlyOff);
            if !self.narrowing() || mode == ComputerUseMode::Off || mode == gui.computer_use {
                gui.computer_use = mode;
                self.applied(key);
            } else {
                self.ignore(
                    key,
                    render(&mode),
                    Rule::OnlyOff,
                    Some(render(&gui.computer_use)),
                );
            }
        }
        let mut actions = Some(gui.max_actions_per_turn);
        self.lower(
            "computer_use.max_actions_per_turn",
            &mut actions,
            max_actions_per_turn,
            DEFAULT_ACTIONS_PER_TURN,
        );
        gui.max_actions_per_turn = actions.unwrap_or(DEFAULT_ACTIONS_PER_TURN);

        self.user_only("media", layer.media, |table| {
            for (kind, endpoint) in table.endpoints() {
                let into = media.endpoints.entry(kind.as_str().to_owned()).or_default();
                overlay(into, endpoint);
            }
        });
    }
}
