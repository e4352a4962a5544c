//! kun-media
