<?php
/**
 * StatusWidget: hit ratio from ramjet's metrics on the dashboard.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * A dashboard widget reading ramjet's /metrics (Prometheus text) and
 * showing the hit ratio since ramjet started.
 */
class StatusWidget {

	/**
	 * Admin API client.
	 *
	 * @var AdminClient
	 */
	private $client;

	/**
	 * A widget reading metrics through $client.
	 *
	 * @param AdminClient $client Admin API client.
	 */
	public function __construct( AdminClient $client ) {
		$this->client = $client;
	}

	/**
	 * Hooks into WordPress.
	 */
	public function register() {
		add_action( 'wp_dashboard_setup', array( $this, 'add' ) );
	}

	/**
	 * Adds the widget for users who can manage options.
	 */
	public function add() {
		if ( current_user_can( 'manage_options' ) ) {
			wp_add_dashboard_widget( 'ramjet_cache_status', esc_html__( 'Ramjet cache', 'ramjet-cache' ), array( $this, 'render' ) );
		}
	}

	/**
	 * Prints the widget.
	 */
	public function render() {
		if ( ! $this->client->configured() ) {
			echo '<p>' . esc_html__( 'Set RAMJET_ADMIN_URL (or the admin URL in Settings → Ramjet Cache) to see cache statistics.', 'ramjet-cache' ) . '</p>';
			return;
		}
		$text = $this->client->metrics();
		if ( is_wp_error( $text ) ) {
			echo '<p>' . esc_html( $text->get_error_message() ) . '</p>';
			return;
		}
		$counts = self::request_counts( $text );
		$hits   = $counts['hit'] + $counts['hit_private'] + $counts['stale'] + $counts['stale_if_error'];
		$total  = array_sum( $counts );
		printf(
			'<p>%s</p>',
			esc_html(
				sprintf(
					/* translators: 1: hit ratio percentage, 2: hits, 3: requests */
					__( 'Hit ratio %1$s%% (%2$d of %3$d requests since ramjet started).', 'ramjet-cache' ),
					number_format_i18n( $total ? 100 * $hits / $total : 0, 1 ),
					$hits,
					$total
				)
			)
		);
	}

	/**
	 * The ramjet_requests_total counters by cache outcome.
	 *
	 * @param string $text Prometheus text.
	 * @return array<string, float> Outcome => count; hit, hit_private and stale always present.
	 */
	public static function request_counts( $text ) {
		$counts = array(
			'hit'            => 0,
			'hit_private'    => 0,
			'stale'          => 0,
			'stale_if_error' => 0,
		);
		if ( preg_match_all( '/^ramjet_requests_total\{cache="([a-z_]+)"\}\s+([0-9.eE+]+)\s*$/m', $text, $m, PREG_SET_ORDER ) ) {
			foreach ( $m as $row ) {
				$counts[ $row[1] ] = (float) $row[2];
			}
		}
		return $counts;
	}
}
