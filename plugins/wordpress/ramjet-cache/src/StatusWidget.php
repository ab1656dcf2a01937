<?php
/**
 * StatusWidget: this site's cache numbers from ramjet on the dashboard.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * A dashboard widget showing this site's hit ratio and counters over the
 * last minute, hour and day, what it has cached, the URLs ramjet did not
 * cache and why, and a button purging the site.
 */
class StatusWidget {

	/** URLs of the "why not cached" list shown. */
	const MAX_URLS = 10;

	/**
	 * This site's stats.
	 *
	 * @var SiteStats
	 */
	private $stats;

	/**
	 * The admin bar, whose purge links the widget's buttons are.
	 *
	 * @var AdminBar
	 */
	private $bar;

	/**
	 * A widget showing $stats, purging through $bar's links.
	 *
	 * @param SiteStats $stats Site stats.
	 * @param AdminBar  $bar   Admin bar.
	 */
	public function __construct( SiteStats $stats, AdminBar $bar ) {
		$this->stats = $stats;
		$this->bar   = $bar;
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
		if ( ! $this->stats->configured() ) {
			echo '<p>' . esc_html__( 'Set RAMJET_ADMIN_URL (or the admin URL in Settings → Ramjet Cache) to see cache statistics.', 'ramjet-cache' ) . '</p>';
			return;
		}
		$s = $this->stats->get();
		if ( is_wp_error( $s ) ) {
			echo '<p class="ramjet-error">' . esc_html( $s->get_error_message() ) . '</p>';
			return;
		}
		$hour = $s['hour'];
		printf(
			'<p class="ramjet-ratio">%s <strong data-ramjet="hit-ratio">%s</strong> (%s)</p>',
			esc_html__( 'Hit ratio over the last hour:', 'ramjet-cache' ),
			esc_html( SiteStats::percent( $hour['hit_ratio'] ) ),
			sprintf(
				/* translators: 1: hits, 2: requests */
				esc_html__( '%1$s of %2$s requests', 'ramjet-cache' ),
				'<span data-ramjet="hits">' . esc_html( (string) $hour['hits'] ) . '</span>',
				'<span data-ramjet="requests">' . esc_html( (string) $hour['requests'] ) . '</span>'
			)
		);
		$this->render_windows( $s );
		printf(
			'<p>%s</p>',
			esc_html(
				sprintf(
					/* translators: 1: cached pages, 2: their size */
					__( 'Cached now: %1$s pages, %2$s.', 'ramjet-cache' ),
					number_format_i18n( $s['cached']['entries'] ),
					size_format( $s['cached']['bytes'] )
				)
			)
		);
		$this->render_uncached( isset( $s['uncached'] ) ? $s['uncached'] : array() );
		printf(
			'<p><a class="button" href="%s">%s</a></p>',
			esc_url( $this->bar->link( 'all', '' ) ),
			esc_html__( 'Purge this site', 'ramjet-cache' )
		);
	}

	/**
	 * Prints the counters of each window.
	 *
	 * @param array $s Site stats.
	 */
	private function render_windows( array $s ) {
		$windows = array(
			'minute' => __( 'Last minute', 'ramjet-cache' ),
			'hour'   => __( 'Last hour', 'ramjet-cache' ),
			'day'    => __( 'Last day', 'ramjet-cache' ),
		);
		$columns = array(
			'requests'    => __( 'Requests', 'ramjet-cache' ),
			'hit_ratio'   => __( 'Hit ratio', 'ramjet-cache' ),
			'misses'      => __( 'Misses', 'ramjet-cache' ),
			'passes'      => __( 'Passes', 'ramjet-cache' ),
			'purges'      => __( 'Purges', 'ramjet-cache' ),
			'waf_blocked' => __( 'WAF blocks', 'ramjet-cache' ),
			'errors'      => __( 'Errors', 'ramjet-cache' ),
		);
		echo '<table class="widefat striped ramjet-windows"><thead><tr><th></th>';
		foreach ( $columns as $label ) {
			echo '<th>' . esc_html( $label ) . '</th>';
		}
		echo '</tr></thead><tbody>';
		foreach ( $windows as $key => $label ) {
			printf( '<tr data-ramjet-window="%s"><th>%s</th>', esc_attr( $key ), esc_html( $label ) );
			foreach ( array_keys( $columns ) as $col ) {
				$v = 'hit_ratio' === $col ? SiteStats::percent( $s[ $key ][ $col ] ) : number_format_i18n( $s[ $key ][ $col ] );
				printf( '<td data-ramjet="%s">%s</td>', esc_attr( $col ), esc_html( $v ) );
			}
			echo '</tr>';
		}
		echo '</tbody></table>';
	}

	/**
	 * Prints the "why not cached" list.
	 *
	 * @param array $urls The URLs ramjet answered uncached, most requested first.
	 */
	private function render_uncached( array $urls ) {
		echo '<h3>' . esc_html__( 'Why not cached', 'ramjet-cache' ) . '</h3>';
		if ( ! $urls ) {
			echo '<p>' . esc_html__( 'Every page asked for in the last day was cached.', 'ramjet-cache' ) . '</p>';
			return;
		}
		echo '<ol class="ramjet-uncached">';
		foreach ( array_slice( $urls, 0, self::MAX_URLS ) as $u ) {
			$path = (string) wp_parse_url( $u['url'], PHP_URL_PATH );
			$qs   = (string) wp_parse_url( $u['url'], PHP_URL_QUERY );
			printf(
				'<li data-ramjet-reason="%s"><a href="%s">%s</a> — %s (%s)</li>',
				esc_attr( $u['reason'] ),
				esc_url( $u['url'] ),
				esc_html( '' === $qs ? $path : $path . '?' . $qs ),
				esc_html( SiteStats::explain( $u['reason'] ) ),
				esc_html(
					sprintf(
						/* translators: %s: number of requests */
						_n( '%s request', '%s requests', (int) $u['count'], 'ramjet-cache' ),
						number_format_i18n( $u['count'] )
					)
				)
			);
		}
		echo '</ol>';
	}
}
